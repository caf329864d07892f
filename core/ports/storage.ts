import type { CreditRepo } from '../credits/credit-types.ts';
import type { IcpDefinition } from '../icp/definition.ts';
import type { ScoreTally } from '../icp/score-tally.ts';
import type { FilterNode, SortSpec } from '../rows/filter-parse.ts';
import type {
  BuilderCheckpoint,
  Cell,
  CellStatus,
  Column,
  ExecutionLogEntry,
  Project,
  Role,
  StoredRow,
  User,
  WaterfallStep,
  Workspace,
} from '../model.ts';

/** The storage doors the kernel needs (docs/architecture.md adapters). `adapters/storage/` implements them. */

/** A job a write starts, kept in the job outbox until the queue has it (docs/scaling.md: Redis away loses nothing). */
/**
 * What a claim of due deliveries leaves to others: at most `perWebhook` in flight per endpoint and
 * `perWorkspace` per workspace, counting those already in flight (`busy`, `busyWorkspaces`).
 */
export interface DeliveryFairness {
  perWebhook: number;
  busy: Map<string, number>;
  perWorkspace: number;
  busyWorkspaces: Map<string, number>;
}

export interface OutboxJob {
  /** The job's id on the queue too, so that handing it over twice runs it once. */
  id: string;
  type: string;
  payload: unknown;
  /** The workspace it works for: queues share their slots fairly between workspaces. */
  tenant?: string;
}

/**
 * The jobs a write starts, made from what it wrote (the rows' seqs, the project) inside its
 * transaction, which stores them in the outbox: the work and its jobs commit together or not at all.
 */
export type JobsOf<R> = (written: R) => OutboxJob[];

/** Jobs that committed writes started and no queue has taken yet (core/jobs/job-outbox.ts relays them). */
export interface JobOutboxRepo {
  /** Jobs stored at least `olderThanMs` ago, oldest first. */
  due(olderThanMs: number, limit: number): Promise<OutboxJob[]>;
  /** Forgets jobs the queue has taken. */
  remove(ids: string[]): Promise<void>;
  /** Jobs waiting in the outbox (for /metrics). */
  depth(): Promise<number>;
  /** Forgets every job; answers how many. */
  clear(): Promise<number>;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  prefix: string;
  keyHash: string;
  revokedAt: number | null;
}

/** A key as an operator lists it: never its hash. */
export interface ApiKeySummary {
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** The email of the user who created it in the console (null: the admin CLI or BOOTSTRAP_API_KEY). */
  createdBy: string | null;
  lastUsedAt: number | null;
  /** Credits it may spend per calendar month (UTC); null: no cap. */
  monthlyCredits: number | null;
  id: string;
}

export interface FoundKey {
  key: ApiKeyRecord;
  workspace: Workspace;
  /** Only when a project id was asked for. */
  project?: Project | null;
}

export interface WorkspaceRepo {
  create(input: { name: string; plan: string }): Promise<Workspace>;
  get(id: string): Promise<Workspace | undefined>;
  setPlan(id: string, plan: string): Promise<boolean>;
  addKey(input: {
    workspaceId: string;
    prefix: string;
    keyHash: string;
    createdBy?: string | null;
    monthlyCredits?: number | null;
  }): Promise<ApiKeyRecord>;
  /** Sets (or with null removes) a live key's monthly credit cap; of this workspace when given (false: no such key). */
  setKeyCap(prefix: string, monthlyCredits: number | null, workspaceId?: string): Promise<boolean>;
  /** The key with this hash (revoked or not), and its workspace. */
  /** With `projectId`: also the workspace's live project of that id (`null` when it has none), in the same read. */
  findKey(keyHash: string, projectId?: string): Promise<FoundKey | undefined>;
  revokeKey(prefix: string): Promise<boolean>;
  /** Revokes a live key of this workspace (false: none with that prefix there). */
  revokeKeyOf(workspaceId: string, prefix: string): Promise<boolean>;
  /** Revokes the live keys of this workspace that this person made (they left it); answers how many. */
  revokeKeysMadeBy(workspaceId: string, userId: string): Promise<number>;
  /** Whether this key of this workspace exists and is not revoked. */
  keyIsLive(workspaceId: string, keyId: string): Promise<boolean>;
  /**
   * Replaces a live key of this workspace by a new one, in one transaction: the new key is added and
   * the old one revoked together (false, and nothing changed: no live key with that prefix there).
   */
  rotateKey(workspaceId: string, prefix: string, next: { prefix: string; keyHash: string; createdBy: string | null }): Promise<boolean>;
  /** The workspace's keys, revoked ones too, oldest first. */
  listKeys(workspaceId: string): Promise<ApiKeySummary[]>;
  /** Records a key's use (callers throttle this: it is a write). */
  touchKey(keyId: string, at: number): Promise<void>;
  /** The oldest workspace of this name (`default`: the bootstrap workspace). */
  findByName(name: string): Promise<Workspace | undefined>;
}

export interface Member {
  user: User;
  role: Role;
  since: number;
}

export interface UserRepo {
  /** Undefined when the email is taken. */
  create(input: { email: string; passwordHash: string }): Promise<User | undefined>;
  findByEmail(email: string): Promise<(User & { passwordHash: string }) | undefined>;
  get(id: string): Promise<User | undefined>;
  setPasswordHash(userId: string, passwordHash: string): Promise<boolean>;
  /** Sets (adds or changes) a user's role in a workspace. */
  setRole(workspaceId: string, userId: string, role: Role): Promise<void>;
  removeMember(workspaceId: string, userId: string): Promise<boolean>;
  /** The user's workspaces with their role, oldest membership first. */
  workspacesOf(userId: string): Promise<{ workspace: Workspace; role: Role }[]>;
  members(workspaceId: string): Promise<Member[]>;
  /** Invites an email to a workspace with a role (replacing an earlier invitation of it there); answers its id. */
  invite(workspaceId: string, email: string, role: Role, invitedBy: string): Promise<string>;
  /** A workspace's invitations not yet accepted, oldest first. */
  invitationsOf(workspaceId: string): Promise<Invitation[]>;
  /** The invitations waiting for this email, with their workspaces. */
  invitationsFor(email: string): Promise<(Invitation & { workspace: Workspace })[]>;
  /** Removes an invitation to this email (accepted or declined) and answers it; undefined when there is none. */
  takeInvitation(id: string, email: string): Promise<Invitation | undefined>;
  /** Withdraws an invitation of this workspace (false: none). */
  withdrawInvitation(workspaceId: string, id: string): Promise<boolean>;
}

export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: Role;
  createdAt: number;
}

export interface SessionRecord {
  tokenHash: string;
  userId: string;
  workspaceId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/** A live session with its user, its workspace and the user's role there (read in one query). */
export interface FoundSession {
  session: SessionRecord;
  user: User;
  workspace: Workspace;
  role: Role;
}

export interface SessionRepo {
  create(session: SessionRecord): Promise<void>;
  /** The session if it exists, is not expired at `now`, and its user still belongs to its workspace. */
  find(tokenHash: string, now: number): Promise<FoundSession | undefined>;
  extend(tokenHash: string, expiresAt: number): Promise<void>;
  remove(tokenHash: string): Promise<void>;
  /** Ends every session of a user (a password change). */
  removeForUser(userId: string): Promise<void>;
}

export interface NewColumn {
  name: string;
  type: 'input' | 'tool';
  toolId?: string | null;
  config?: unknown;
  autoRun?: boolean;
  runCondition?: string | null;
  waterfall?: WaterfallStep[] | null;
  maxCreditsPerRow?: number | null;
  stepOrder?: 'listed' | 'auto';
  /** addColumn: the status of existing rows' cells in a tool column (default `pending`). */
  cellStatus?: 'pending' | 'queued';
}

export interface ProjectListQuery {
  workspaceId: string;
  limit: number;
  offset: number;
  nameSearch?: string;
}

export interface ProjectRepo {
  create(
    input: {
      /** A chosen public id (e.g. one already named in a credit reservation); generated when absent. */
      id?: string;
      workspaceId: string;
      creatorId: string;
      name: string;
      builderId: string | null;
      formData: unknown;
      columns: NewColumn[];
    },
    jobs?: JobsOf<Project>,
  ): Promise<Project>;
  /** A live project of this workspace; another workspace's project is `undefined`, like a missing one. */
  get(workspaceId: string, id: string): Promise<Project | undefined>;
  getByPk(pk: number): Promise<Project | undefined>;
  /** The form a project's builder run was created with (kept apart from the project: it can be megabytes). */
  formData(pk: number): Promise<unknown>;
  /** Whether the project is still there (not deleted): a cheap check between a run's pages. */
  isLive(pk: number): Promise<boolean>;
  /** Live projects whose builder run is `queued` or `running` (work to resume after a restart). */
  unfinishedBuilds(): Promise<number[]>;
  list(q: ProjectListQuery): Promise<{ projects: Project[]; total: number }>;
  /** Live projects of a workspace (plan quota). */
  countLive(workspaceId: string): Promise<number>;
  /**
   * A project's columns, in order. Pass the project just read to have them remembered per process
   * while its `columnsVersion` stands; pass its pk to read them now.
   */
  columns(project: Project | number): Promise<Column[]>;
  /** Adds a column (422 when the name is taken); existing rows get its empty cell. */
  addColumn(projectPk: number, column: NewColumn): Promise<Column>;
  /** Deletes a live column (false: none of that number); the project's column caches on every process read it anew. */
  deleteColumn(projectPk: number, colNo: number): Promise<boolean>;
  setSavedFilters(pk: number, filterGroups: unknown[]): Promise<void>;
  /** The project's settings (JSON), when its unique columns stay as they are (else RowRepo.replaceKeys). */
  setSettings(pk: number, settings: string): Promise<void>;
  /** Soft-deletes a project (it answers 404 from then on; rows are purged later). */
  softDelete(pk: number): Promise<void>;
  setBuilderState(pk: number, state: BuilderRunState): Promise<void>;
  /**
   * Starts the builder again (a schedule): the new state and the run's job commit together, unless
   * a run is queued or running (false, nothing changed: runs never overlap) or the project is gone.
   */
  restartBuilder(pk: number, state: BuilderRunState, jobs: JobsOf<boolean>): Promise<boolean>;
}

/** What a builder run records: status, progress, checkpoint and log (any part may be left out). */
export interface BuilderRunState {
  builderStatus: Project['builderStatus'];
  builderError?: string | null;
  builderProgress?: Project['builderProgress'];
  checkpoint?: BuilderCheckpoint | null;
  log?: ExecutionLogEntry[];
  /**
   * A page's write: the checkpoint the run last wrote. The page commits only if the project still
   * holds it (else StaleBuilderRun, nothing written), so two attempts of one run never both write.
   */
  checkpointWas?: BuilderCheckpoint | null;
  /**
   * The run's previous page while it is still being written (a bulk load writes `bulkLanes` pages at
   * once): this page's rows go in beside it, but its state is written only once that page has
   * committed, so checkpoints commit in page order; when that page fails, this one fails with it.
   */
  after?: Promise<unknown>;
}

export interface RowPageQuery {
  projectPk: number;
  /** Tool columns: their cell status lives with the cell keys and is read from there. */
  toolCols?: number[];
  filter: FilterNode | null;
  sort: SortSpec[];
  limit: number;
  offset: number;
}

export interface RowRepo {
  /**
   * The most rows one call should name for each of its statements to stay one index lookup; a call
   * naming more is split into several statements. Work handed out in batches (enrichment jobs)
   * stays at or under it.
   */
  readonly rowsPerStatement: number;
  /** Rows one insert of a bulk load (an import page) should carry on this database. */
  readonly bulkRows: number;
  /**
   * Pages of one bulk load written at once: their rows go in side by side on as many connections
   * (1 where a write holds the whole database). Only pages that start no jobs and check no unique key.
   */
  readonly bulkLanes: number;
  /**
   * Inserts rows atomically (all or none); returns their sequence numbers, in order. A builder page
   * passes its state so that the rows and the checkpoint commit together (no duplicate on resume).
   * `runId`: the run that queues the rows' `queued` tool cells (auto-run columns). `keys`: each
   * row's unique key (null: none), written with the rows; a key the project holds already fails the
   * whole insert with the dialect's duplicate-key error, and nothing is written.
   */
  insert(
    projectPk: number,
    columns: Column[],
    rows: Record<number, Cell>[],
    builderState?: BuilderRunState,
    jobs?: JobsOf<number[]>,
    runId?: string,
    keys?: (string | null)[],
  ): Promise<number[]>;
  page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }>;
  get(projectPk: number, seq: number, toolCols?: number[]): Promise<StoredRow | undefined>;
  first(projectPk: number, toolCols?: number[]): Promise<StoredRow | undefined>;
  /** Live row counts of several projects. */
  counts(projectPks: number[]): Promise<Map<number, number>>;
  /** The project's change counter: it moves with every write of its rows or cells. */
  version(projectPk: number): Promise<number>;
  /** Soft-deletes rows of the project; returns how many were live. */
  softDelete(projectPk: number, seqs: number[]): Promise<number>;
  /** Tool columns of live projects that hold `queued` or `running` cells (work to resume after a restart). */
  unfinishedColumns(): Promise<{ projectPk: number; colNo: number }[]>;
  /**
   * Rows of one column whose cell status is one of `from`, moved to `to`; returns their seqs.
   * `runId` (a run's id, or null for none) records the run that queues them; undefined keeps it.
   */
  moveStatus(
    projectPk: number,
    colNo: number,
    from: CellStatus[],
    to: CellStatus,
    seqs?: number[],
    jobs?: JobsOf<number[]>,
    runId?: string | null,
  ): Promise<number[]>;
  /** Live rows of the project holding these unique keys: key → seq. */
  findKeys(projectPk: number, keys: string[]): Promise<Map<string, number>>;
  /** Fills the empty input cells of existing rows with the given values (on_conflict "update"); answers the cells filled. */
  fillEmpty(projectPk: number, columns: Column[], updates: { seq: number; cells: Record<number, Cell> }[]): Promise<FilledCell[]>;
  /** Replaces the project's unique keys by these (every live row's), together with its settings (JSON), in one transaction. */
  replaceKeys(projectPk: number, settings: string, keys: { seq: number; key: string }[]): Promise<void>;
  /** The run each of these cells of one column was queued by (cells without one are absent). */
  runsOf(projectPk: number, colNo: number, seqs: number[]): Promise<Map<number, string>>;
  /** Writes tool results (value, status, error) of one column, atomically for the batch. */
  writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[], jobs?: JobsOf<void>): Promise<void>;
  /** Several rows by seq (live only), in the order asked. */
  getMany(projectPk: number, seqs: number[], toolCols?: number[]): Promise<StoredRow[]>;
  /** Up to `limit` live rows after `afterSeq`, in insertion order: a walk over a project that no insert or delete can make skip a row. */
  pageAfter(projectPk: number, afterSeq: number, limit: number, toolCols?: number[]): Promise<StoredRow[]>;
}

/** A workspace's named Ideal Customer Profile. */
export interface IcpRecord {
  id: string;
  workspaceId: string;
  name: string;
  definition: IcpDefinition;
  createdAt: number;
  updatedAt: number;
}

/** ICPs, always scoped to a workspace: another workspace's id reads as missing. */
export interface IcpRepo {
  create(input: { workspaceId: string; name: string; definition: IcpDefinition }): Promise<IcpRecord>;
  get(workspaceId: string, id: string): Promise<IcpRecord | undefined>;
  /** Oldest first. */
  list(workspaceId: string): Promise<IcpRecord[]>;
  /** The updated ICP, or undefined when it is not one of this workspace's. */
  update(workspaceId: string, id: string, patch: { name?: string; definition?: IcpDefinition }): Promise<IcpRecord | undefined>;
  delete(workspaceId: string, id: string): Promise<boolean>;
}

export type IcpScoreRunStatus = 'queued' | 'running' | 'completed' | 'failed';

/** A score_icp run over a project: what it scores, where it stands, what it found so far. */
export interface IcpScoreRunRecord {
  id: string;
  workspaceId: string;
  icpId: string;
  projectPk: number;
  projectId: string;
  /** The tool column that receives the scores, if any. */
  colNo: number | null;
  /** The ICP's definition when the run was asked for (editing the ICP mid-run changes nothing). */
  definition: IcpDefinition;
  status: IcpScoreRunStatus;
  /** Live rows when the run was asked for. */
  rowsTotal: number;
  rowsDone: number;
  /** Checkpoint: the last row scored (0 before the first). */
  afterSeq: number;
  tally: ScoreTally;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

/** Score runs; reads by the caller are scoped to the workspace, the job reads by id. */
export interface IcpScoreRunRepo {
  create(run: Omit<IcpScoreRunRecord, 'createdAt' | 'updatedAt'>, jobs?: JobsOf<IcpScoreRunRecord>): Promise<IcpScoreRunRecord>;
  get(workspaceId: string, id: string): Promise<IcpScoreRunRecord | undefined>;
  getById(id: string): Promise<IcpScoreRunRecord | undefined>;
  /** Ids of runs still `queued` or `running` (work to resume after a restart). */
  unfinished(): Promise<string[]>;
  update(id: string, patch: Partial<Pick<IcpScoreRunRecord, 'status' | 'rowsDone' | 'afterSeq' | 'tally' | 'error'>>): Promise<void>;
}

/** OAuth subjects linked to workspaces (`bun run admin oauth:link`), for tokens without a workspace_id claim. */
export interface OAuthIdentityRepo {
  link(input: { issuer: string; subject: string; workspaceId: string }): Promise<void>;
  workspaceFor(issuer: string, subject: string): Promise<string | undefined>;
}

/** A client of the built-in authorization server, registered (RFC 7591) or read from its metadata document. */
export interface OAuthClientRecord {
  clientId: string;
  /** SHA-256 of the client secret; null for public clients (`none`). */
  secretHash: string | null;
  clientName: string;
  redirectUris: string[];
  authMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  /** The registration as answered to the client (without the secret). */
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** An authorization code (only its SHA-256 is stored), single use, short-lived. */
export interface OAuthCodeRecord {
  codeHash: string;
  clientId: string;
  clientName: string;
  userId: string;
  workspaceId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  expiresAt: number;
}

/** A person's consent to a client in one workspace: the family of its refresh tokens, listed and revoked in the console. */
export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  clientName: string;
  userId: string;
  workspaceId: string;
  resource: string;
  scope: string;
  createdAt: number;
  lastUsedAt: number;
  revokedAt: number | null;
}

export interface OAuthSigningKeyRecord {
  kid: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  createdAt: number;
  retiredAt: number | null;
}

/** What redeeming a code or a refresh token found: `spent` means it had been used before (a replay). */
export type OAuthRedeemed<T> = { state: 'ok'; value: T } | { state: 'spent'; grantId: string | null } | { state: 'invalid' };

/** The authorization server's records (migration 016). */
export interface OAuthRepo {
  /** False when the id is taken. */
  createClient(client: OAuthClientRecord): Promise<boolean>;
  getClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  saveCode(code: OAuthCodeRecord): Promise<void>;
  /** A code as stored (used or not), to check its client, redirect URI and PKCE before spending it. */
  findCode(codeHash: string): Promise<(OAuthCodeRecord & { usedAt: number | null }) | undefined>;
  /** Marks a live code used, in one statement (two exchanges of one code: one wins). */
  redeemCode(codeHash: string, now: number): Promise<OAuthRedeemed<OAuthCodeRecord>>;
  /**
   * Records a second use of a code and answers the grant its first use made, if made yet; a grant
   * made after this (a race) is created revoked.
   */
  markCodeReplayed(codeHash: string, now: number): Promise<string | null>;
  /** The grant a code became, with its first refresh token, in one transaction. */
  createGrant(grant: OAuthGrantRecord, refresh: { hash: string; expiresAt: number }, codeHash: string): Promise<void>;
  /**
   * Marks a live refresh token of this client used and stores its successor, in one transaction;
   * its grant must be live (not revoked, its person still a member).
   */
  rotateRefresh(
    hash: string,
    clientId: string,
    next: { hash: string; expiresAt: number },
    now: number,
  ): Promise<OAuthRedeemed<OAuthGrantRecord>>;
  /** The grant a refresh token belongs to (any state), for revocation (RFC 7009). */
  grantOfRefresh(hash: string): Promise<OAuthGrantRecord | undefined>;
  getGrant(id: string): Promise<OAuthGrantRecord | undefined>;
  /** Whether a grant is live: not revoked, and its person still a member of its workspace. */
  grantIsLive(id: string): Promise<boolean>;
  /** Revokes a grant (and so every token of it); false when it was not live. */
  revokeGrant(id: string, now: number): Promise<boolean>;
  /** A person's live grants in a workspace, newest first. */
  grantsOf(userId: string, workspaceId: string): Promise<OAuthGrantRecord[]>;
  signingKeys(): Promise<OAuthSigningKeyRecord[]>;
  /** Adds a key and retires every other live one at `now`, in one transaction. */
  addSigningKey(key: OAuthSigningKeyRecord, now: number): Promise<void>;
  /** Deletes keys retired before one time, codes and refresh tokens expired before another. */
  prune(input: { keysRetiredBefore: number; expiredBefore: number }): Promise<void>;
}

/** What claiming an idempotency key found. */
export type IdempotencyClaim =
  | { state: 'claimed' }
  | { state: 'done'; status: number; response: unknown }
  | { state: 'busy' }
  | { state: 'mismatch' };

/** Stored answers of requests sent with an idempotency key (24 h). */
export interface IdempotencyRepo {
  /** Claims the key for this request, or tells what an earlier request with it left. */
  claim(workspaceId: string, key: string, operation: string, requestHash: string): Promise<IdempotencyClaim>;
  complete(workspaceId: string, key: string, status: number, response: unknown): Promise<void>;
  /** Forgets a claim whose request failed unexpectedly, so that a retry runs it again. */
  release(workspaceId: string, key: string): Promise<void>;
}

/** Results of paid lookups by the tool's cache key (a cached result costs nothing). */
/** A result kept for reuse, and when it was found. */
export interface CachedResult {
  value: unknown;
  /** ms; null for entries older than this field. */
  fetchedAt: number | null;
}

export interface EnrichmentCache {
  /** Entries not expired and found at or after `fetchedSince` (ms) when given. */
  getMany(keys: string[], fetchedSince?: number): Promise<Map<string, CachedResult>>;
  /** `fetchedAt` (ms): when the results were found, as their cells' provenance says. */
  putMany(entries: { key: string; value: unknown }[], ttlMs: number, fetchedAt: number): Promise<void>;
}

/** What one step of an enrichment batch did with a tool (self-tuning waterfalls, docs/enrichment.md). */
/** An insert met a unique key another write stored first (nothing was written): read the keys again. */
/**
 * A builder page whose run is no longer the one the project follows (its attempt timed out and a
 * retry took over, which moved the checkpoint): nothing was written; the stale run stops.
 */
export class StaleBuilderRun extends Error {
  override name = 'StaleBuilderRun';
  constructor() {
    super('the builder run moved on without this attempt');
  }
}

export class UniqueKeyTaken extends Error {
  override name = 'UniqueKeyTaken';
  constructor() {
    super('a unique key of these rows was just taken by another write');
  }
}

/** An input cell filled in an existing row. */
export interface FilledCell {
  seq: number;
  colNo: number;
  value: unknown;
}

export interface ToolRunFigures {
  toolId: string;
  /** Rows the tool ran on and settled (found, nothing found, or failed for good). */
  attempts: number;
  found: number;
  /** Net of refunds. */
  credits: number;
  latencyMs: number;
}

/** A workspace's running figures for one tool. */
export interface ToolStats extends ToolRunFigures {
  updatedAt: number;
}

export interface ToolStatsRepo {
  /** Adds each run's figures to its tool's totals (one upsert per tool). */
  add(workspaceId: string, runs: ToolRunFigures[]): Promise<void>;
  /** The workspace's totals for these tools (tools never run are absent). */
  get(workspaceId: string, toolIds: string[]): Promise<Map<string, ToolStats>>;
}

/** A workspace's endpoint for events (docs/enrichment.md, webhooks). */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  description: string;
  /** `whsec_…`: signs every delivery (Standard Webhooks). */
  secret: string;
  createdAt: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event sent (or to send) to one endpoint, and how its attempts went. */
export interface DeliveryRecord {
  /** `msg_…`: the `webhook-id` header; the same on every attempt and re-send (receivers dedupe by it). */
  id: string;
  webhookId: string;
  eventType: string;
  /** The JSON body, as signed. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  retryUntil: number;
  responseStatus: number | null;
  error: string | null;
  createdAt: number;
  lastAttemptAt: number | null;
  deliveredAt: number | null;
}

/** What one attempt did: delivered, or when to try again (none: given up). */
export type AttemptOutcome =
  | { delivered: true; responseStatus: number }
  | { delivered: false; responseStatus: number | null; error: string; nextAttemptAt: number | null };

export interface WebhookRepo {
  create(webhook: WebhookRecord): Promise<void>;
  get(workspaceId: string, id: string): Promise<WebhookRecord | undefined>;
  list(workspaceId: string): Promise<WebhookRecord[]>;
  /** Deletes the webhook and its deliveries (false: none of that id in the workspace). */
  delete(workspaceId: string, id: string): Promise<boolean>;
  /** The workspace's webhooks that want this event. */
  subscribed(workspaceId: string, eventType: string): Promise<WebhookRecord[]>;
  /** Records deliveries, due now; one whose (webhook, dedupe key) is recorded already is left out. */
  enqueue(
    deliveries: { id: string; webhookId: string; eventType: string; dedupeKey: string; payload: string }[],
    retryUntil: number,
  ): Promise<void>;
  /**
   * Claims up to `limit` due deliveries for `leaseMs` (another process claims none of them
   * meanwhile), with their webhooks, taking at most `perWebhook` of an endpoint less those
   * `busy` (webhook id → deliveries already in flight).
   */
  claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    fairness?: DeliveryFairness,
  ): Promise<{ delivery: DeliveryRecord; webhook: WebhookRecord }[]>;
  /** Records an attempt's outcome and releases the lease. */
  recordAttempt(id: string, at: number, outcome: AttemptOutcome): Promise<void>;
  /** A webhook's deliveries, newest first; `before`: a created_at/id cursor of the previous page. */
  deliveries(webhookId: string, limit: number, before?: { createdAt: number; id: string }): Promise<DeliveryRecord[]>;
  getDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined>;
  /** Makes a delivery due again now, with a new retry window (a re-send); answers it as it is then. */
  resend(webhookId: string, id: string, now: number, retryUntil: number): Promise<DeliveryRecord | undefined>;
  /** The project of an inbound URL secret (its SHA-256), and the API key that made it, if any. */
  inboundProject(tokenHash: string): Promise<{ projectPk: number; keyId: string | null } | undefined>;
  /** Sets a project's inbound URL secret (SHA-256) made by this key (none: a console session), replacing any earlier one. */
  setInbound(projectPk: number, tokenHash: string, at: number, keyId?: string): Promise<void>;
  /** Turns a project's inbound URL off (false: it had none). */
  removeInbound(projectPk: number): Promise<boolean>;
}

/** A project's schedule (docs/enrichment.md): when its builder runs again. */
export interface ScheduleRecord {
  projectPk: number;
  cron: string;
  timezone: string;
  nextRunAt: number;
  lastRunAt: number | null;
  /** What the last due time did: a run started, or why none did. */
  lastOutcome: string | null;
  /** The API key that set it (null: a console session): its runs spend under that key's monthly cap. */
  keyId: string | null;
  createdAt: number;
}

export interface ScheduleRepo {
  get(projectPk: number): Promise<ScheduleRecord | undefined>;
  /** Sets (or replaces) a project's schedule. */
  put(schedule: Omit<ScheduleRecord, 'lastRunAt' | 'lastOutcome'>): Promise<void>;
  /** False: the project had none. */
  remove(projectPk: number): Promise<boolean>;
  /** Schedules due at `now`, oldest first. */
  due(now: number, limit: number): Promise<ScheduleRecord[]>;
  /**
   * Takes a due time: moves the schedule from `dueAt` to `nextRunAt` in one statement, and answers
   * whether this call did (of two processes taking one due time, one does).
   */
  take(projectPk: number, dueAt: number, nextRunAt: number): Promise<boolean>;
  /** Records what a due time did. */
  recordOutcome(projectPk: number, at: number, outcome: string): Promise<void>;
}

/** An uploaded file (a CSV), stored in text parts as it streamed in. */
export interface UploadRecord {
  id: string;
  workspaceId: string;
  /** The file name, as sent (or the project's name). */
  name: string;
  bytes: number;
  parts: number;
  /** The file's first characters (its header). */
  head: string;
  createdAt: number;
  /** Set once every part is stored; an upload never completed is not imported. */
  completedAt: number | null;
  /** The project importing it (its id, named before the project is made). */
  projectId: string | null;
}

export interface UploadRepo {
  create(upload: Omit<UploadRecord, 'bytes' | 'parts' | 'head' | 'completedAt' | 'projectId'>): Promise<void>;
  addPart(uploadId: string, partNo: number, text: string): Promise<void>;
  complete(uploadId: string, totals: { bytes: number; parts: number; head: string }): Promise<void>;
  get(workspaceId: string, id: string): Promise<UploadRecord | undefined>;
  /** Names the project that imports the upload (false: it is another project's already). */
  attach(uploadId: string, projectId: string): Promise<boolean>;
  /** The parts' text, in order, read one at a time. */
  read(uploadId: string): AsyncIterable<string>;
  /** Deletes an upload and its parts. */
  remove(uploadId: string): Promise<void>;
  /** Deletes uploads created before `before` that no run reads any more (never imported, project deleted, run over); answers how many (at most 100 a call). */
  pruneUnused(before: number): Promise<number>;
}

export interface Storage {
  workspaces: WorkspaceRepo;
  credits: CreditRepo;
  cache: EnrichmentCache;
  toolStats: ToolStatsRepo;
  idempotency: IdempotencyRepo;
  projects: ProjectRepo;
  rows: RowRepo;
  icps: IcpRepo;
  icpScoreRuns: IcpScoreRunRepo;
  oauthIdentities: OAuthIdentityRepo;
  outbox: JobOutboxRepo;
  users: UserRepo;
  sessions: SessionRepo;
  oauth: OAuthRepo;
  webhooks: WebhookRepo;
  schedules: ScheduleRepo;
  uploads: UploadRepo;
  /** Liveness of the database, for health checks. */
  ping(): Promise<void>;
  /** Migrations of this code the database has not applied yet (empty once start-up migrated it). */
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}
