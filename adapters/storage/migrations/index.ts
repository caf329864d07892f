import type { Migration, MigrationProvider } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';
import { initialSchema } from './001-initial.ts';
import { columnsAndFilters } from './002-columns-and-filters.ts';
import { icpsAndOAuthIdentities } from './003-icps.ts';
import { builderCheckpoints } from './004-builder-checkpoints.ts';
import { credits } from './005-credits.ts';
import { enrichmentCache } from './006-enrichment-cache.ts';
import { rowVersions } from './007-row-versions.ts';
import { toolCellsInKeys } from './008-tool-cells-in-keys.ts';
import { icpScoreRuns } from './009-icp-score-runs.ts';
import { widerText } from './010-wider-text.ts';
import { filterTotals } from './012-filter-totals.ts';
import { jobOutbox } from './013-job-outbox.ts';
import { rowChanges } from './014-row-changes.ts';
import { accounts } from './015-accounts.ts';
import { oauthServer } from './016-oauth-server.ts';
import { spendControl } from './017-spend-control.ts';
import { uniqueKeys } from './018-unique-keys.ts';
import { webhooks } from './019-webhooks.ts';
import { schedules } from './020-schedules.ts';
import { credentialMakers } from './023-credential-makers.ts';
import { invitations } from './024-invitations.ts';
import { workTasks } from './025-work-tasks.ts';
import { jobTenants } from './022-job-tenants.ts';
import { uploads } from './021-uploads.ts';
import { outboxHanded } from './026-outbox-handed.ts';
import { cellHolders } from './027-cell-holders.ts';

/** Every migration, in order. Names sort lexically; never rename or edit one that has shipped. */
export function migrationProvider(types: SchemaTypes): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '001-initial': initialSchema(types),
        '002-columns-and-filters': columnsAndFilters(),
        '003-icps': icpsAndOAuthIdentities(types),
        '004-builder-checkpoints': builderCheckpoints(),
        '005-credits': credits(types),
        '006-enrichment-cache': enrichmentCache(types),
        '007-row-versions': rowVersions(),
        '008-tool-cells-in-keys': toolCellsInKeys(types),
        '009-icp-score-runs': icpScoreRuns(types),
        '010-wider-text': widerText(types),
        '012-filter-totals': filterTotals(types),
        '013-job-outbox': jobOutbox(types),
        '014-row-changes': rowChanges(types),
        '015-accounts': accounts(types),
        '016-oauth-server': oauthServer(types),
        '017-spend-control': spendControl(types),
        '018-unique-keys': uniqueKeys(types),
        '019-webhooks': webhooks(types),
        '020-schedules': schedules(types),
        '021-uploads': uploads(types),
        '022-job-tenants': jobTenants(),
        '023-credential-makers': credentialMakers(),
        '024-invitations': invitations(types),
        '025-work-tasks': workTasks(types),
        '026-outbox-handed': outboxHanded(types),
        '027-cell-holders': cellHolders(types),
      };
    },
  };
}
