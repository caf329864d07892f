import type { ColumnType, Generated } from 'kysely';

/**
 * Kysely table types. Timestamps are epoch milliseconds (BIGINT) so both dialects store and
 * compare them the same way; the REST layer turns them into ISO 8601.
 */
export interface WorkspaceTable {
  id: string;
  name: string;
  plan: string;
  created_at: number;
}

export interface ApiKeyTable {
  id: string;
  workspace_id: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  /** The user who created it in the console (null: the admin CLI or BOOTSTRAP_API_KEY); migration 015. */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** Credits the key may spend per calendar month (UTC); null: no cap. Migration 017. */
  monthly_credits: ColumnType<number | null, number | null | undefined, number | null>;
}

/** People (migration 015): `email` lower-cased; `password_hash` argon2id (Bun.password). */
export interface UserTable {
  id: string;
  email: string;
  password_hash: string;
  created_at: number;
}

export interface MembershipTable {
  workspace_id: string;
  user_id: string;
  role: string;
  created_at: number;
}

/** Long work handed to a caller as a task: a builder or column run of a project (migration 025). */
export interface WorkTaskTable {
  id: string;
  workspace_id: string;
  project_pk: number;
  kind: string;
  /** JSON array of the column ids of a column run (null: a builder run). */
  col_ids: string | null;
  total: number;
  cancelled_at: number | null;
  created_at: number;
  expires_at: number;
}

/** Invitations to a workspace, accepted by the invited person (migration 024). */
export interface InvitationTable {
  id: string;
  workspace_id: string;
  email: string;
  role: string;
  invited_by: string;
  created_at: number;
}

/** Console sessions: the SHA-256 of the cookie's token, never the token. */
export interface SessionTable {
  token_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface CreditLedgerTable {
  id: Generated<number>;
  workspace_id: string;
  kind: string;
  amount: number;
  project_id: string | null;
  job_id: string | null;
  note: string | null;
  column_id: string | null;
  row_id: string | null;
  plugin_id: string | null;
  idem_key: string | null;
  /** The API key whose call started the spending (migration 017): its monthly cap sums these. */
  key_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
}

/** What a call that queued cells allows them (migration 017): its cap (`max_credits`) and its API key. */
export interface RunTable {
  id: string;
  workspace_id: string;
  cap: number | null;
  spent: number;
  key_id: string | null;
  created_at: number;
}

/** What a key spent in a calendar month (`YYYY-MM`, UTC), net of refunds (migration 017). */
export interface KeyMonthTable {
  key_id: string;
  month: string;
  spent: number;
}

/** Per workspace and tool, the running figures of its runs (migration 017). */
export interface ToolStatsTable {
  workspace_id: string;
  tool_id: string;
  attempts: number;
  found: number;
  credits: number;
  latency_ms: number;
  updated_at: number;
}

export interface EnrichmentCacheTable {
  /** When the result was found (migration 017; null for older entries). */
  fetched_at: ColumnType<number | null, number | null | undefined, number | null>;
  cache_key: string;
  value: string;
  expires_at: number;
}

export interface CreditBalanceTable {
  workspace_id: string;
  balance: number;
}

export interface IdempotencyKeyTable {
  workspace_id: string;
  idem_key: string;
  operation: string;
  request_hash: string;
  status: number | null;
  response: string | null;
  created_at: number;
}

export interface ProjectTable {
  pk: Generated<number>;
  id: string;
  workspace_id: string;
  creator_id: string;
  name: string;
  name_lower: string;
  builder_id: string | null;
  form_data: string | null;
  builder_status: string;
  builder_error: string | null;
  builder_progress: string | null;
  next_col_no: number;
  saved_filters: string | null;
  builder_checkpoint: string | null;
  execution_log: string | null;
  /** JSON: unique columns and on_conflict (migration 018); null: the defaults. */
  settings: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** One live row's unique key in a project that has unique columns (migration 018). */
export interface RowKeyTable {
  project_pk: number;
  /** SHA-256 (hex) of the row's normalised key values. */
  key_hash: string;
  seq: number;
}

export interface ColumnTable {
  project_pk: number;
  col_no: number;
  id: string;
  name: string;
  type: string;
  tool_id: string | null;
  config: string | null;
  auto_run: number;
  run_condition: string | null;
  waterfall: string | null;
  max_credits_per_row: number | null;
  /** `auto`: a waterfall tries its steps by best cost per result (migration 017); null: as listed. */
  step_order: string | null;
  position: number;
  created_at: number;
  deleted_at: number | null;
}

export interface RowTable {
  project_pk: number;
  seq: number;
  cells: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

/** One typed key per (project, column, row): what filters and sorts run on (docs/storage.md). */
export interface CellKeyTable {
  project_pk: number;
  col_no: number;
  seq: number;
  status: string;
  is_empty: number;
  num_missing: number;
  num_key: number | null;
  text_key: string;
  text_full: string | null;
  /** Tool cells only: `{v, e}` as JSON (see migration 008); null for input cells and unfilled tool cells. */
  cell?: string | null;
  /** Tool cells: the run that queued the cell last (migration 017), whose limits its charges keep. */
  run_id?: string | null;
  /** Tool cells: the enrichment job that holds the cell (migration 027): claimed it, or queued it for its own retry. */
  held_by?: string | null;
}

export interface RowCountTable {
  project_pk: number;
  shard: number;
  n: number;
  /** Change counter (see migration 007). */
  v: Generated<number>;
}

/** Shared filtered totals (migration 012, rows/shared-totals.ts). */
export interface FilterTotalTable {
  project_pk: number;
  filter_key: string;
  shard: number;
  shape: string | null;
  base_version: number;
  total: number;
  adjusted: number;
  used_at: number;
}

export interface SequenceTable {
  name: string;
  next_value: number;
}

/** A workspace's ICP; `definition` is the JSON of core/icp/definition.ts. */
export interface IcpTable {
  id: string;
  workspace_id: string;
  name: string;
  definition: string;
  created_at: number;
  updated_at: number;
}

/** A score_icp run (migration 009); `definition` and `tally` are JSON. */
export interface IcpScoreRunTable {
  id: string;
  workspace_id: string;
  icp_id: string;
  project_pk: number;
  project_id: string;
  col_no: number | null;
  definition: string;
  status: string;
  rows_total: number;
  rows_done: number;
  after_seq: number;
  tally: string;
  error: string | null;
  created_at: number;
  updated_at: number;
}

/** Maps an OAuth token's (issuer, subject) to a workspace (MCP host). */
export interface OAuthIdentityTable {
  issuer: string;
  subject: string;
  workspace_id: string;
  created_at: number;
}

/** The built-in authorization server (migration 016): secrets, codes and refresh tokens only as SHA-256. */
export interface OAuthClientTable {
  client_id: string;
  secret_hash: string | null;
  client_name: string;
  /** JSON array. */
  redirect_uris: string;
  auth_method: string;
  /** JSON: the registration as answered (RFC 7591). */
  metadata: string;
  created_at: number;
}

export interface OAuthCodeTable {
  code_hash: string;
  client_id: string;
  client_name: string;
  user_id: string;
  workspace_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scope: string;
  expires_at: number;
  used_at: ColumnType<number | null, number | null | undefined, number | null>;
  grant_id: ColumnType<string | null, string | null | undefined, string | null>;
  replayed_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OAuthGrantTable {
  id: string;
  client_id: string;
  client_name: string;
  user_id: string;
  workspace_id: string;
  resource: string;
  scope: string;
  created_at: number;
  last_used_at: number;
  revoked_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OAuthRefreshTokenTable {
  token_hash: string;
  grant_id: string;
  created_at: number;
  expires_at: number;
  used_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OAuthSigningKeyTable {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A job a committed write started, not yet handed to the queue (migration 013); `payload` is JSON. */
export interface JobOutboxTable {
  id: string;
  type: string;
  payload: string;
  created_at: number;
  /** The workspace the job works for (migration 022); null for jobs stored before it. */
  tenant: string | null;
  /** When the queue took it, and which queue server (migration 026); null while it waits in the outbox. */
  handed_at: number | null;
  handed_to: string | null;
}

/** One record per row write, for other processes' listing anchors (migration 014, rows/row-changes.ts). */
export interface RowChangeTable {
  id: Generated<number>;
  project_pk: number;
  kind: number;
  first_seq: number | null;
  row_count: number | null;
  col_no: number | null;
}

export interface WebhookTable {
  id: string;
  workspace_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  description: string;
  secret: string;
  created_at: number;
}

export interface WebhookDeliveryTable {
  id: string;
  webhook_id: string;
  event_type: string;
  dedupe_key: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  retry_until: number;
  lease_until: number;
  response_status: number | null;
  error: string | null;
  created_at: number;
  last_attempt_at: number | null;
  delivered_at: number | null;
}

export interface InboundUrlTable {
  project_pk: number;
  token_hash: string;
  created_at: number;
  /** The API key that made it (migration 023): the URL stops working when that key is revoked. */
  key_id: string | null;
}

export interface ScheduleTable {
  project_pk: number;
  cron: string;
  timezone: string;
  next_run_at: number;
  last_run_at: number | null;
  last_outcome: string | null;
  key_id: string | null;
  created_at: number;
}

export interface UploadTable {
  id: string;
  workspace_id: string;
  name: string;
  bytes: number;
  parts: number;
  head: string;
  created_at: number;
  completed_at: number | null;
  project_id: string | null;
}

export interface UploadPartTable {
  upload_id: string;
  part_no: number;
  text: string;
}

export interface Tables {
  workspaces: WorkspaceTable;
  api_keys: ApiKeyTable;
  credit_ledger: CreditLedgerTable;
  credit_balances: CreditBalanceTable;
  runs: RunTable;
  key_months: KeyMonthTable;
  tool_stats: ToolStatsTable;
  enrichment_cache: EnrichmentCacheTable;
  idempotency_keys: IdempotencyKeyTable;
  projects: ProjectTable;
  project_columns: ColumnTable;
  project_rows: RowTable;
  cell_keys: CellKeyTable;
  row_keys: RowKeyTable;
  project_row_counts: RowCountTable;
  filter_totals: FilterTotalTable;
  id_sequences: SequenceTable;
  icps: IcpTable;
  icp_score_runs: IcpScoreRunTable;
  oauth_identities: OAuthIdentityTable;
  job_outbox: JobOutboxTable;
  row_changes: RowChangeTable;
  users: UserTable;
  memberships: MembershipTable;
  invitations: InvitationTable;
  sessions: SessionTable;
  oauth_clients: OAuthClientTable;
  oauth_codes: OAuthCodeTable;
  oauth_grants: OAuthGrantTable;
  oauth_refresh_tokens: OAuthRefreshTokenTable;
  oauth_signing_keys: OAuthSigningKeyTable;
  webhooks: WebhookTable;
  webhook_deliveries: WebhookDeliveryTable;
  inbound_urls: InboundUrlTable;
  schedules: ScheduleTable;
  uploads: UploadTable;
  upload_parts: UploadPartTable;
  work_tasks: WorkTaskTable;
}
