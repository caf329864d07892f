/** What a ledger entry belongs to (its job, project, column and row) and which plugin spent it. */
export interface LedgerRef {
  projectId?: string | null;
  jobId?: string | null;
  columnId?: string | null;
  rowId?: string | null;
  pluginId?: string | null;
  note?: string | null;
  /** The API key whose call started the spending (its monthly cap sums these entries). */
  keyId?: string | null;
}

/** `adjust`: an operator's correction (admin credits:adjust), signed, with its reason in `note`. */
export type LedgerKind = 'grant' | 'reserve' | 'charge' | 'refund' | 'adjust';

/**
 * The largest balance a workspace may hold: credits are JavaScript numbers on the way in and out,
 * so a balance stays a safe integer (exact in every driver and in JSON answers).
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

/** A grant or adjustment that would take the balance past MAX_BALANCE; nothing was written. */
export class BalanceOverflowError extends Error {
  override name = 'BalanceOverflowError';
  constructor(
    readonly balance: number,
    readonly amount: number,
  ) {
    super(`the balance is ${balance}; adding ${amount} would pass the largest balance allowed (${MAX_BALANCE})`);
  }
}

/** What an adjustment did: the new balance, or why it was refused (with the balance it met). */
export type AdjustOutcome = { ok: true; balance: number } | { ok: false; reason: 'negative' | 'overflow'; balance: number };

export interface LedgerEntry extends LedgerRef {
  id: number;
  workspaceId: string;
  kind: LedgerKind;
  /** Signed effect on the balance: grants and refunds add, reservations and charges take. */
  amount: number;
  idemKey: string | null;
  createdAt: number;
}

/**
 * The run a charge belongs to (docs/enrichment.md): what a call that queued cells allows them,
 * its `max_credits` and the API key it came with (whose monthly cap also bounds it). `enforce:
 * false` records the charge against the run and the key without stopping at their caps (a cell
 * already charged by an earlier waterfall step finishes its steps).
 */
export interface RunCharge {
  id: string;
  enforce?: boolean;
}

/** A run's record: its cap (null: none), what it has spent net of refunds, its key. */
export interface RunRecord {
  cap: number | null;
  spent: number;
  keyId: string | null;
}

/** Which bound a debit met first: the balance, the run's `max_credits`, or the key's monthly cap. */
export type SpendStop = 'balance' | 'run_cap' | 'key_cap';

/** A key's monthly cap and what it spent this calendar month (UTC): what a 402 names. */
export interface KeyMonth {
  cap: number;
  spent: number;
  /** When the month's sum starts again (ms). */
  resetsAt: number;
}

/** One debit of a batch: its own idempotency key, so a redelivered job never pays twice. */
export interface DebitItem extends LedgerRef {
  idemKey: string;
}

/**
 * The credit ledger (append-only). The balance is the sum of the entries; a materialised copy is
 * updated in the same transaction as each entry so it can be checked and taken atomically.
 */
export interface CreditRepo {
  /**
   * Adds `amount` (> 0) and answers the new balance. Throws BalanceOverflowError, writing nothing,
   * when the balance would pass MAX_BALANCE. A second grant with the same idempotency key is ignored.
   */
  grant(workspaceId: string, amount: number, ref?: LedgerRef & { idemKey?: string }): Promise<number>;
  /**
   * An operator's correction (kind `adjust`, the reason in `note`): adds `delta`, which may be
   * negative, unless the balance would go below zero or past MAX_BALANCE. The check and the write
   * are one transaction, with the balance row locked, as for debits.
   */
  adjust(workspaceId: string, delta: number, ref: LedgerRef & { note: string }): Promise<AdjustOutcome>;
  /**
   * Takes `amount` (kind reserve or charge) if the balance covers it. `duplicate` when an entry with
   * this idempotency key exists already (it was paid before).
   */
  debit(
    workspaceId: string,
    kind: 'reserve' | 'charge',
    amount: number,
    ref: LedgerRef & { idemKey?: string },
  ): Promise<'ok' | 'insufficient' | 'key_cap' | 'duplicate'>;
  /**
   * Charges `each` for as many items as the balance and the limits cover, in order; answers the
   * idempotency keys that are paid (now, or by an earlier delivery), and which bound stopped the
   * rest (null when every item is paid).
   */
  chargeMany(
    workspaceId: string,
    each: number,
    items: DebitItem[],
    run?: RunCharge,
  ): Promise<{ paid: Set<string>; stoppedBy: SpendStop | null }>;
  /**
   * Gives credits back (kind refund); a second refund with the same key is ignored. `of`: the charge
   * it gives back (its key and month are credited) and the run it was charged to.
   */
  refund(workspaceId: string, amount: number, ref: LedgerRef & { idemKey: string }, of?: { charge: string; runId?: string }): Promise<void>;
  /** A run's record for the cells a call queues; answers its id. */
  createRun(workspaceId: string, limits: { cap?: number; keyId?: string }): Promise<string>;
  run(runId: string): Promise<RunRecord | null>;
  /** Forgets runs created before `olderThan` (ms); their cells, if still queued, then run without limits. */
  pruneRuns(olderThan: number): Promise<number>;
  /** The key's monthly cap and this month's spending; null when the key has no cap. */
  keyMonth(keyId: string): Promise<KeyMonth | null>;
  balance(workspaceId: string): Promise<number>;
  /** Credits spent per plugin since `sinceMs` (reservations net of refunds). */
  usage(workspaceId: string, sinceMs: number): Promise<{ plugin_id: string; credits: number }[]>;
  /** Sum of a project's reservations net of refunds (what its builder still holds or spent). */
  projectNet(projectId: string, pluginId: string): Promise<number>;
  entries(workspaceId: string, limit: number): Promise<LedgerEntry[]>;
}
