import type { EnrichmentCache } from './storage/enrichment-cache.ts';
import type { IcpRepo, IcpScoreRunRepo } from './storage/icps.ts';
import type { IdempotencyRepo } from './storage/idempotency.ts';
import type { JobOutboxRepo } from './storage/job-outbox.ts';
import type { OAuthIdentityRepo, OAuthRepo } from './storage/oauth.ts';
import type { ProjectRepo } from './storage/projects.ts';
import type { RowRepo } from './storage/rows.ts';
import type { ScheduleRepo } from './storage/schedules.ts';
import type { SessionRepo } from './storage/sessions.ts';
import type { ToolStatsRepo } from './storage/tool-stats.ts';
import type { UploadRepo } from './storage/uploads.ts';
import type { WorkTaskRepo } from './storage/work-tasks.ts';
import type { UserRepo } from './storage/users.ts';
import type { WebhookRepo } from './storage/webhooks.ts';
import type { WorkspaceRepo } from './storage/workspaces.ts';
import type { CreditRepo } from '../credits/credit-types.ts';

/** The storage ports the kernel needs (docs/architecture.md); adapters/storage/ implements them, one repository a file under storage/. */
export * from './storage/job-outbox.ts';
export * from './storage/workspaces.ts';
export * from './storage/users.ts';
export * from './storage/sessions.ts';
export * from './storage/projects.ts';
export * from './storage/rows.ts';
export * from './storage/icps.ts';
export * from './storage/oauth.ts';
export * from './storage/idempotency.ts';
export * from './storage/enrichment-cache.ts';
export * from './storage/tool-stats.ts';
export * from './storage/webhooks.ts';
export * from './storage/schedules.ts';
export * from './storage/uploads.ts';
export * from './storage/work-tasks.ts';

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
  tasks: WorkTaskRepo;
  /** Liveness of the database, for health checks. */
  ping(): Promise<void>;
  /** Migrations of this code the database has not applied yet (empty once start-up migrated it). */
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}
