import type { IdempotencyClaim, IdempotencyRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';

/** Answers are kept 24 hours; an older record is replaced by the next request with its key. */
const TTL_MS = 24 * 60 * 60 * 1000;

export class SqlIdempotencyRepo implements IdempotencyRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async claim(workspaceId: string, key: string, operation: string, requestHash: string): Promise<IdempotencyClaim> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.db
          .insertInto('idempotency_keys')
          .values({
            workspace_id: workspaceId,
            idem_key: key,
            operation,
            request_hash: requestHash,
            status: null,
            response: null,
            created_at: Date.now(),
          })
          .execute();
        return { state: 'claimed' };
      } catch (e) {
        if (!this.database.dialect.errors.isDuplicateKey(e)) throw e;
      }
      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('idem_key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // released meanwhile: claim again
      if (Number(row.created_at) < Date.now() - TTL_MS) {
        await this.release(workspaceId, key);
        continue;
      }
      if (row.operation !== operation || row.request_hash !== requestHash) return { state: 'mismatch' };
      if (row.status === null) return { state: 'busy' };
      return { state: 'done', status: Number(row.status), response: JSON.parse(row.response ?? 'null') };
    }
    return { state: 'busy' };
  }

  async complete(workspaceId: string, key: string, status: number, response: unknown): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ status, response: JSON.stringify(response) })
      .where('workspace_id', '=', workspaceId)
      .where('idem_key', '=', key)
      .execute();
  }

  async release(workspaceId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('workspace_id', '=', workspaceId).where('idem_key', '=', key).execute();
  }
}
