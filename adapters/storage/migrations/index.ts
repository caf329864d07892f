import type { Migration, MigrationProvider } from 'kysely/migration';
import type { SqlDialectName } from '../database.ts';
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

/** Every migration, in order. Names sort lexically; never rename or edit one that has shipped. */
export function migrationProvider(dialect: SqlDialectName): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '001-initial': initialSchema(dialect),
        '002-columns-and-filters': columnsAndFilters(),
        '003-icps': icpsAndOAuthIdentities(dialect),
        '004-builder-checkpoints': builderCheckpoints(),
        '005-credits': credits(dialect),
        '006-enrichment-cache': enrichmentCache(dialect),
        '007-row-versions': rowVersions(),
        '008-tool-cells-in-keys': toolCellsInKeys(dialect),
        '009-icp-score-runs': icpScoreRuns(dialect),
        '010-wider-text': widerText(dialect),
      };
    },
  };
}
