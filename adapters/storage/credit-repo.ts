import { type Kysely, sql } from 'kysely';
import {
  type AdjustOutcome,
  BalanceOverflowError,
  type CreditRepo,
  type DebitItem,
  type KeyMonth,
  type LedgerEntry,
  type LedgerKind,
  type LedgerRef,
  MAX_BALANCE,
  type RunCharge,
  type RunRecord,
  type SpendStop,
} from '../../core/credits/credit-types.ts';
import { newId } from '../../core/ids.ts';
import type { Database } from './database.ts';
import type { Tables } from './tables.ts';

/** Thrown inside a transaction to roll it back with a known answer. */
class Abort extends Error {
  constructor(
    readonly answer: 'insufficient' | 'overflow' | 'key_cap',
    /** The balance met, when the answer depends on it. */
    readonly balance = 0,
  ) {
    super(answer);
  }
}

function ledgerValues(workspaceId: string, kind: LedgerKind, amount: number, ref: LedgerRef & { idemKey?: string | null }) {
  return {
    workspace_id: workspaceId,
    kind,
    amount,
    project_id: ref.projectId ?? null,
    job_id: ref.jobId ?? null,
    column_id: ref.columnId ?? null,
    row_id: ref.rowId ?? null,
    plugin_id: ref.pluginId ?? null,
    note: ref.note ?? null,
    idem_key: ref.idemKey ?? null,
    key_id: ref.keyId ?? null,
    created_at: Date.now(),
  };
}

/** The calendar month (UTC) a key's cap counts (`YYYY-MM`), and the next month's first millisecond. */
function monthOf(now: number): { label: string; next: number } {
  const d = new Date(now);
  return { label: d.toISOString().slice(0, 7), next: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

export class SqlCreditRepo implements CreditRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  private isDuplicateKey(e: unknown): boolean {
    return this.database.dialect.errors.isDuplicateKey(e);
  }

  /** Adds `delta` to the materialised balance (creating it), in the caller's transaction. */
  private async addToBalance(trx: Kysely<Tables>, workspaceId: string, delta: number): Promise<void> {
    const q = trx.insertInto('credit_balances').values({ workspace_id: workspaceId, balance: delta });
    await this.database.dialect.upsert(q, ['workspace_id'], () => ({ balance: sql`balance + ${delta}` })).execute();
  }

  /** Locks and reads the balance row, so concurrent debits of a workspace run one after the other. */
  private async lockedBalance(trx: Kysely<Tables>, workspaceId: string): Promise<number> {
    const q = trx.selectFrom('credit_balances').select('balance').where('workspace_id', '=', workspaceId);
    const r = await this.database.dialect.locking.lockedRead(q).executeTakeFirst();
    return Number(r?.balance ?? 0);
  }

  /** What a key may still spend this month (Infinity without a cap), read under the workspace's balance lock. */
  private async keyLeft(trx: Kysely<Tables>, keyId: string | undefined | null): Promise<number> {
    if (!keyId) return Number.POSITIVE_INFINITY;
    const month = await this.keyMonthIn(trx, keyId);
    return month ? Math.max(0, month.cap - month.spent) : Number.POSITIVE_INFINITY;
  }

  private async keyMonthIn(db: Kysely<Tables>, keyId: string): Promise<KeyMonth | null> {
    const key = await db.selectFrom('api_keys').select('monthly_credits').where('id', '=', keyId).executeTakeFirst();
    if (key?.monthly_credits === null || key?.monthly_credits === undefined) return null;
    const { label, next } = monthOf(Date.now());
    const r = await db.selectFrom('key_months').select('spent').where('key_id', '=', keyId).where('month', '=', label).executeTakeFirst();
    return { cap: Number(key.monthly_credits), spent: Math.max(0, Number(r?.spent ?? 0)), resetsAt: next };
  }

  /** Adds a ledger entry's spending to its key's month (of `at`, ms), in the entry's transaction. */
  private async addToKeyMonth(trx: Kysely<Tables>, keyId: string | null | undefined, spent: number, at = Date.now()): Promise<void> {
    if (!keyId || spent === 0) return;
    const q = trx.insertInto('key_months').values({ key_id: keyId, month: monthOf(at).label, spent });
    await this.database.dialect.upsert(q, ['key_id', 'month'], () => ({ spent: sql`spent + ${spent}` })).execute();
  }

  /** Locks a run's record (taken after the balance row, as every debit does). Null when it is gone. */
  private async lockedRun(trx: Kysely<Tables>, runId: string | undefined) {
    if (!runId) return null;
    const q = trx.selectFrom('runs').select(['cap', 'spent', 'key_id']).where('id', '=', runId);
    const r = await this.database.dialect.locking.lockedRead(q).executeTakeFirst();
    return r ? { cap: r.cap === null ? null : Number(r.cap), spent: Number(r.spent), keyId: r.key_id } : null;
  }

  private async addToRun(trx: Kysely<Tables>, runId: string | undefined, spent: number): Promise<void> {
    if (!runId || spent === 0) return;
    await trx
      .updateTable('runs')
      .set({ spent: sql`spent + ${spent}` })
      .where('id', '=', runId)
      .execute();
  }

  async grant(workspaceId: string, amount: number, ref: LedgerRef & { idemKey?: string } = {}): Promise<number> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new RangeError(`a grant is a positive safe integer, got ${amount}`);
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('credit_ledger')
          .values(ledgerValues(workspaceId, 'grant', amount, ref))
          .execute();
        await this.addToBalance(trx, workspaceId, amount);
        // Read back under the row lock the upsert holds (no lock taken before the write, so concurrent
        // first grants of a workspace never deadlock); past the limit, the transaction is undone.
        const after = await this.lockedBalance(trx, workspaceId);
        if (after > MAX_BALANCE) throw new Abort('overflow');
      });
    } catch (e) {
      if (e instanceof Abort) throw new BalanceOverflowError(await this.balance(workspaceId), amount);
      if (!this.isDuplicateKey(e)) throw e; // the same grant (e.g. a monthly one) was given already
    }
    return this.balance(workspaceId);
  }

  async adjust(workspaceId: string, delta: number, ref: LedgerRef & { note: string }): Promise<AdjustOutcome> {
    if (!Number.isSafeInteger(delta) || delta === 0) throw new RangeError(`an adjustment is a non-zero safe integer, got ${delta}`);
    try {
      const balance = await this.db.transaction().execute(async (trx) => {
        const before = await this.lockedBalance(trx, workspaceId);
        if (before + delta < 0) throw new Abort('insufficient', before);
        if (before + delta > MAX_BALANCE) throw new Abort('overflow', before);
        await trx
          .insertInto('credit_ledger')
          .values(ledgerValues(workspaceId, 'adjust', delta, ref))
          .execute();
        await this.addToBalance(trx, workspaceId, delta);
        return before + delta;
      });
      return { ok: true, balance };
    } catch (e) {
      if (e instanceof Abort) return { ok: false, reason: e.answer === 'insufficient' ? 'negative' : 'overflow', balance: e.balance };
      throw e;
    }
  }

  async debit(
    workspaceId: string,
    kind: 'reserve' | 'charge',
    amount: number,
    ref: LedgerRef & { idemKey?: string },
  ): Promise<'ok' | 'insufficient' | 'key_cap' | 'duplicate'> {
    try {
      await this.db.transaction().execute(async (trx) => {
        if ((await this.lockedBalance(trx, workspaceId)) < amount) throw new Abort('insufficient');
        if ((await this.keyLeft(trx, ref.keyId)) < amount) throw new Abort('key_cap');
        await trx
          .insertInto('credit_ledger')
          .values(ledgerValues(workspaceId, kind, -amount, ref))
          .execute();
        await this.addToBalance(trx, workspaceId, -amount);
        await this.addToKeyMonth(trx, ref.keyId, amount);
      });
      return 'ok';
    } catch (e) {
      if (e instanceof Abort) return e.answer === 'key_cap' ? 'key_cap' : 'insufficient';
      if (this.isDuplicateKey(e)) return 'duplicate';
      throw e;
    }
  }

  async chargeMany(
    workspaceId: string,
    each: number,
    items: DebitItem[],
    run?: RunCharge,
  ): Promise<{ paid: Set<string>; stoppedBy: SpendStop | null }> {
    if (items.length === 0) return { paid: new Set(), stoppedBy: null };
    if (each <= 0) return { paid: new Set(items.map((i) => i.idemKey)), stoppedBy: null };
    let paid = new Set<string>();
    let stoppedBy: SpendStop | null = null;
    await this.db.transaction().execute(async (trx) => {
      // Each run of the transaction (a lost conflict runs it again) starts from nothing paid.
      paid = new Set<string>();
      stoppedBy = null;
      // The balance row first: every debit of the workspace takes it, so the run and the key's month
      // are read and written by one transaction at a time.
      const balance = await this.lockedBalance(trx, workspaceId);
      const keys = items.map((i) => i.idemKey);
      const existing = await trx.selectFrom('credit_ledger').select('idem_key').where('idem_key', 'in', keys).execute();
      for (const e of existing) if (e.idem_key) paid.add(e.idem_key);
      const fresh = items.filter((i) => !paid.has(i.idemKey));
      if (fresh.length === 0) return;
      const limits = await this.lockedRun(trx, run?.id);
      const enforce = run?.enforce !== false;
      const bounds: [SpendStop, number][] = [['balance', balance]];
      if (enforce && limits?.cap != null) bounds.unshift(['run_cap', Math.max(0, limits.cap - limits.spent)]);
      if (enforce && limits?.keyId) bounds.unshift(['key_cap', await this.keyLeft(trx, limits.keyId)]);
      const [bound, left] = bounds.reduce((a, b) => (b[1] < a[1] ? b : a));
      const affordable = fresh.slice(0, Math.max(0, Math.floor(left / each)));
      if (affordable.length < fresh.length) stoppedBy = bound;
      if (affordable.length === 0) return;
      const spent = each * affordable.length;
      const keyId = limits?.keyId ?? null;
      for (let i = 0; i < affordable.length; i += 500) {
        await trx
          .insertInto('credit_ledger')
          .values(affordable.slice(i, i + 500).map((item) => ledgerValues(workspaceId, 'charge', -each, { ...item, keyId })))
          .execute();
      }
      await this.addToBalance(trx, workspaceId, -spent);
      await this.addToKeyMonth(trx, keyId, spent);
      if (limits) await this.addToRun(trx, run?.id, spent);
      for (const item of affordable) paid.add(item.idemKey);
    });
    return { paid, stoppedBy };
  }

  async refund(
    workspaceId: string,
    amount: number,
    ref: LedgerRef & { idemKey: string },
    of?: { charge: string; runId?: string },
  ): Promise<void> {
    if (amount <= 0) return;
    try {
      await this.db.transaction().execute(async (trx) => {
        // Back where the charge was taken from: its key, in the month it was taken, and its run.
        const charge = of
          ? await trx.selectFrom('credit_ledger').select(['key_id', 'created_at']).where('idem_key', '=', of.charge).executeTakeFirst()
          : undefined;
        const keyId = charge?.key_id ?? null;
        await trx
          .insertInto('credit_ledger')
          .values(ledgerValues(workspaceId, 'refund', amount, { ...ref, keyId }))
          .execute();
        await this.addToBalance(trx, workspaceId, amount);
        await this.addToKeyMonth(trx, keyId, -amount, charge ? Number(charge.created_at) : undefined);
        await this.addToRun(trx, of?.runId, -amount);
      });
    } catch (e) {
      if (!this.isDuplicateKey(e)) throw e;
    }
  }

  async createRun(workspaceId: string, limits: { cap?: number; keyId?: string }): Promise<string> {
    const id = newId();
    await this.db
      .insertInto('runs')
      .values({ id, workspace_id: workspaceId, cap: limits.cap ?? null, spent: 0, key_id: limits.keyId ?? null, created_at: Date.now() })
      .execute();
    return id;
  }

  async run(runId: string): Promise<RunRecord | null> {
    const r = await this.db.selectFrom('runs').select(['cap', 'spent', 'key_id']).where('id', '=', runId).executeTakeFirst();
    return r ? { cap: r.cap === null ? null : Number(r.cap), spent: Number(r.spent), keyId: r.key_id } : null;
  }

  async pruneRuns(olderThan: number): Promise<number> {
    const r = await this.db.deleteFrom('runs').where('created_at', '<', olderThan).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  keyMonth(keyId: string): Promise<KeyMonth | null> {
    return this.keyMonthIn(this.db, keyId);
  }

  async balance(workspaceId: string): Promise<number> {
    const r = await this.db.selectFrom('credit_balances').select('balance').where('workspace_id', '=', workspaceId).executeTakeFirst();
    return Number(r?.balance ?? 0);
  }

  async usage(workspaceId: string, sinceMs: number): Promise<{ plugin_id: string; credits: number }[]> {
    const rows = await this.db
      .selectFrom('credit_ledger')
      .select(['plugin_id', (eb) => eb.fn.sum<number>('amount').as('net')])
      .where('workspace_id', '=', workspaceId)
      .where('kind', 'in', ['reserve', 'charge', 'refund'])
      .where('created_at', '>=', sinceMs)
      .where('plugin_id', 'is not', null)
      .groupBy('plugin_id')
      .execute();
    return rows
      .map((r) => ({ plugin_id: r.plugin_id as string, credits: -Number(r.net) }))
      .filter((r) => r.credits !== 0)
      .sort((a, b) => b.credits - a.credits);
  }

  async projectNet(projectId: string, pluginId: string): Promise<number> {
    const r = await this.db
      .selectFrom('credit_ledger')
      .select((eb) => eb.fn.sum<number>('amount').as('net'))
      .where('project_id', '=', projectId)
      .where('plugin_id', '=', pluginId)
      .where('kind', 'in', ['reserve', 'refund'])
      .executeTakeFirst();
    return -Number(r?.net ?? 0);
  }

  async entries(workspaceId: string, limit: number): Promise<LedgerEntry[]> {
    const rows = await this.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      workspaceId: r.workspace_id,
      kind: r.kind as LedgerKind,
      amount: Number(r.amount),
      projectId: r.project_id,
      jobId: r.job_id,
      columnId: r.column_id,
      rowId: r.row_id,
      pluginId: r.plugin_id,
      note: r.note,
      keyId: r.key_id,
      idemKey: r.idem_key,
      createdAt: Number(r.created_at),
    }));
  }
}
