import type { Redis } from 'ioredis';

/**
 * The run_id of the server a connection is on, read again on every (re)connection. Another one means
 * the queue moved (a Sentinel failover) or its server restarted: either may have lost the writes it
 * acknowledged last (replication is asynchronous; fsync may lag), which the outbox then hands over again.
 */
export class ServerIdentity {
  current: string | undefined;

  constructor(private readonly conn: Redis) {
    conn.on('ready', () => void this.read().catch(() => undefined));
  }

  async read(): Promise<string | undefined> {
    const info = String(await this.conn.call('INFO', ['server']));
    const id = /^run_id:(\w+)/m.exec(info)?.[1];
    if (id) this.current = id;
    return this.current;
  }
}
