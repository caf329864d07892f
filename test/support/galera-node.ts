import { type Subprocess, spawn } from 'bun';
import { mkdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';

/** The Galera library of Debian's `galera-4` package. */
export const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';

/** Loopback ports of one node: SQL clients, group communication, incremental and full state transfers. */
export interface GaleraPorts {
  client: number;
  gcomm: number;
  ist: number;
  sst: number;
}

export interface NodeStatus {
  clusterSize: number;
  ready: boolean;
  /** wsrep_local_state_comment: Synced, Joining, Donor/Desynced… */
  state: string;
}

/**
 * Failure detection on loopback: a node that stops answering is suspected after 1 s (Galera's
 * default is 5 s, during which every commit and causal read in the cluster waits). MariaDB's own
 * Galera tests use the same suspect timeout.
 */
const FAST_FAILURE_DETECTION =
  'evs.keepalive_period=PT0.2S;evs.inactive_check_period=PT0.2S;evs.suspect_timeout=PT1S;evs.inactive_timeout=PT3S;evs.join_retrans_period=PT0.2S';

/** The rsync SST script's daemon drops root to `nobody`; as root the node runs as `mysql` (Debian's), owning its files. */
const RUN_AS = process.getuid?.() === 0 ? 'mysql' : undefined;

/**
 * One mariadbd of a Galera cluster on loopback, as a plain process with a my.cnf of its own (the
 * SST scripts read it): InnoDB, binlog_format=ROW, interleaved auto-increments, rsync SST.
 */
export class GaleraNode {
  private proc: Subprocess | undefined;

  constructor(
    readonly index: number,
    readonly dir: string,
    readonly ports: GaleraPorts,
    private readonly members: GaleraPorts[],
  ) {}

  get name(): string {
    return `node${this.index + 1}`;
  }

  get address(): string {
    return `127.0.0.1:${this.ports.client}`;
  }

  get url(): string {
    return `mysql://root@${this.address}`;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get pid(): number | undefined {
    return this.running ? this.proc?.pid : undefined;
  }

  private get datadir(): string {
    return join(this.dir, 'data');
  }

  private get cnf(): string {
    return join(this.dir, 'my.cnf');
  }

  /** Writes the node's my.cnf and makes its folders (a joining node's data dir is filled by SST). */
  prepare(options: { bufferPoolMb: number }): void {
    mkdirSync(join(this.dir, 'tmp'), { recursive: true });
    mkdirSync(this.datadir, { recursive: true });
    const gcomm = this.members.map((p) => `127.0.0.1:${p.gcomm}`).join(',');
    const provider = [
      `gmcast.listen_addr=tcp://127.0.0.1:${this.ports.gcomm}`,
      `ist.recv_addr=127.0.0.1:${this.ports.ist}`,
      'gcache.size=256M',
      FAST_FAILURE_DETECTION,
    ].join(';');
    const lines = [
      '[mysqld]',
      `datadir=${this.datadir}`,
      `socket=${join(this.dir, 'mysqld.sock')}`,
      `tmpdir=${join(this.dir, 'tmp')}`,
      `pid-file=${join(this.dir, 'mysqld.pid')}`,
      `log-error=${join(this.dir, 'error.log')}`,
      `port=${this.ports.client}`,
      'bind-address=127.0.0.1',
      ...(RUN_AS ? [`user=${RUN_AS}`] : []),
      `innodb_buffer_pool_size=${options.bufferPoolMb}M`,
      'innodb_log_file_size=128M',
      'innodb_flush_log_at_trx_commit=2',
      'max_connections=500',
      'character_set_server=utf8mb4',
      'collation_server=utf8mb4_unicode_ci',
      // What Galera asks of the server: row-based replication, InnoDB, no table-level auto-increment lock.
      'binlog_format=ROW',
      'default_storage_engine=InnoDB',
      'innodb_autoinc_lock_mode=2',
      'wsrep_on=ON',
      `wsrep_provider=${GALERA_PROVIDER}`,
      'wsrep_cluster_name=wfs',
      `wsrep_cluster_address=gcomm://${gcomm}`,
      `wsrep_node_name=${this.name}`,
      `wsrep_node_address=127.0.0.1:${this.ports.gcomm}`,
      `wsrep_provider_options="${provider}"`,
      `wsrep_sst_receive_address=127.0.0.1:${this.ports.sst}`,
      'wsrep_sst_method=rsync',
      'wsrep_slave_threads=2',
      '',
    ];
    writeFileSync(this.cnf, lines.join('\n'));
    this.own();
  }

  /** A fresh data dir (mariadb-install-db), for the node that bootstraps the cluster. */
  install(): void {
    rmSync(this.datadir, { recursive: true, force: true });
    const install = Bun.spawnSync(
      [
        'mariadb-install-db',
        '--no-defaults',
        `--datadir=${this.datadir}`,
        `--user=${RUN_AS ?? 'root'}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    if (install.exitCode !== 0) {
      throw new Error(
        `mariadb-install-db failed (is mariadb-server installed? run scripts/setup-services.sh): ${install.stderr.toString().slice(-500)}`,
      );
    }
    this.own();
  }

  /** Gives the node's folder to the user it runs as. */
  private own(): void {
    if (!RUN_AS) return;
    const uid = Number(Bun.spawnSync(['id', '-u', RUN_AS]).stdout.toString());
    const gid = Number(Bun.spawnSync(['id', '-g', RUN_AS]).stdout.toString());
    Bun.spawnSync(['chown', '-R', `${uid}:${gid}`, this.dir]);
  }

  /** `bootstrap`: a new cluster of this node alone (--wsrep-new-cluster); `position`: where its data stops (IST from there). */
  start(options: { bootstrap?: boolean; position?: string } = {}): void {
    const args = ['mariadbd', `--defaults-file=${this.cnf}`];
    if (options.bootstrap) args.push('--wsrep-new-cluster');
    if (options.position) args.push(`--wsrep_start_position=${options.position}`);
    this.proc = spawn(args, { stdout: 'ignore', stderr: 'ignore' });
  }

  /** kill -9, as a crash or a lost machine: nothing is flushed or said to the others. */
  async kill(): Promise<void> {
    if (!this.proc) return;
    this.proc.kill('SIGKILL');
    await this.proc.exited;
  }

  /** A clean shutdown (SIGTERM), the node leaving the cluster. */
  async stop(): Promise<void> {
    if (!this.proc || !this.running) return;
    this.proc.kill('SIGTERM');
    await Promise.race([this.proc.exited, Bun.sleep(20_000)]);
    if (this.running) this.proc.kill('SIGKILL');
    await this.proc.exited;
  }

  /**
   * The position the data dir stops at after a crash (mariadbd --wsrep-recover reads it from
   * InnoDB, as Debian's systemd unit does before starting): with it the node rejoins by IST, from
   * the others' write-set cache, instead of copying every file again.
   */
  recoverPosition(): string | undefined {
    const log = join(this.dir, 'recover.log');
    const run = Bun.spawnSync(['mariadbd', `--defaults-file=${this.cnf}`, '--wsrep-recover', `--log-error=${log}`], {
      stdout: 'ignore',
      stderr: 'ignore',
    });
    if (run.exitCode !== 0) return undefined;
    return /Recovered position: ([0-9a-f-]+:-?\d+)/.exec(readFileSync(log, 'utf8'))?.[1];
  }

  /** How long the node's error log is now: what it writes from here on is `logSince(length)`. */
  logLength(): number {
    return Bun.file(join(this.dir, 'error.log')).size;
  }

  logSince(offset: number): Promise<string> {
    return Bun.file(join(this.dir, 'error.log'))
      .slice(offset)
      .text()
      .catch(() => '');
  }

  /** The last lines of the node's error log (state transfers write there too), for a failure's message. */
  logTail(lines = 30): string {
    try {
      return readFileSync(join(this.dir, 'error.log'), 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** wsrep status, or undefined while the node does not answer. */
  async status(): Promise<NodeStatus | undefined> {
    if (!this.running) return undefined;
    try {
      const c = await createConnection({ host: '127.0.0.1', port: this.ports.client, user: 'root', connectTimeout: 2_000 });
      try {
        const [rows] = await c.query(
          "SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_ready', 'wsrep_local_state_comment')",
        );
        const v = new Map((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, r.Value]));
        return {
          clusterSize: Number(v.get('wsrep_cluster_size')),
          ready: v.get('wsrep_ready') === 'ON',
          state: v.get('wsrep_local_state_comment') ?? '',
        };
      } finally {
        await c.end();
      }
    } catch {
      return undefined;
    }
  }

  /** Waits until the node is Synced and ready in a cluster of `size` nodes. */
  /** `stalled`: asked on each poll; true gives up waiting ('stalled') so that the caller may start the node again. */
  async waitSynced(size: number, timeoutMs = 300_000, stalled?: () => Promise<boolean>): Promise<'synced' | 'stalled'> {
    const deadline = Date.now() + timeoutMs;
    let last: NodeStatus | undefined;
    while (Date.now() < deadline) {
      if (stalled && (await stalled())) return 'stalled';
      if (this.proc && !this.running) throw new Error(`${this.name} exited (code ${this.proc.exitCode}); its log ends:\n${this.logTail()}`);
      last = await this.status();
      if (last?.ready && last.state === 'Synced' && last.clusterSize === size) return 'synced';
      await Bun.sleep(200);
    }
    throw new Error(
      `${this.name} not Synced in a cluster of ${size} within ${timeoutMs} ms (last: ${JSON.stringify(last)}); its log ends:\n${this.logTail()}`,
    );
  }
}
