/** What a ledger entry belongs to (DESIGN: job, project, column, row) and which plugin spent it. */
export interface LedgerRef {
  projectId?: string | null;
  jobId?: string | null;
  columnId?: string | null;
  rowId?: string | null;
  pluginId?: string | null;
  note?: string | null;
}

export type LedgerKind = 'grant' | 'reserve' | 'charge' | 'refund';

export interface LedgerEntry extends LedgerRef {
  id: number;
  workspaceId: string;
  kind: LedgerKind;
  /** Signed effect on the balance: grants and refunds add, reservations and charges take. */
  amount: number;
  idemKey: string | null;
  createdAt: number;
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
  grant(workspaceId: string, amount: number, ref?: LedgerRef & { idemKey?: string }): Promise<number>;
  /**
   * Takes `amount` (kind reserve or charge) if the balance covers it. `duplicate` when an entry with
   * this idempotency key exists already (it was paid before).
   */
  debit(workspaceId: string, kind: 'reserve' | 'charge', amount: number, ref: LedgerRef & { idemKey?: string }): Promise<'ok' | 'insufficient' | 'duplicate'>;
  /**
   * Charges `each` for as many items as the balance covers, in order; answers the idempotency keys
   * that are paid (now, or by an earlier delivery). The rest could not be paid.
   */
  chargeMany(workspaceId: string, each: number, items: DebitItem[]): Promise<Set<string>>;
  /** Gives credits back (kind refund); a second refund with the same key is ignored. */
  refund(workspaceId: string, amount: number, ref: LedgerRef & { idemKey: string }): Promise<void>;
  balance(workspaceId: string): Promise<number>;
  /** Credits spent per plugin since `sinceMs` (reservations net of refunds). */
  usage(workspaceId: string, sinceMs: number): Promise<{ plugin_id: string; credits: number }[]>;
  /** Sum of a project's reservations net of refunds (what its builder still holds or spent). */
  projectNet(projectId: string, pluginId: string): Promise<number>;
  entries(workspaceId: string, limit: number): Promise<LedgerEntry[]>;
}
