import { openStatsBoard } from '../adapters/metrics/worker-stats-boards.ts';
import { openQueue } from '../adapters/queue/open-queue.ts';
import { openStorage } from '../adapters/storage/sql-storage.ts';
import type { Config } from '../core/config.ts';
import { loadConfig } from '../core/config.ts';
import { setLogLevel } from '../core/log.ts';
import { configurePlans } from '../core/plans.ts';
import { CsvText, type JobsAccess, runAdmin } from '../doors/cli/admin.ts';

/** The shared Redis queue and its stats board, for the jobs:* commands. */
async function openJobs(config: Config): Promise<JobsAccess> {
  const queue = await openQueue(config.redis, config.queue);
  const board = openStatsBoard(config.redis, config.queue.prefix ?? 'wfs');
  return {
    queue,
    board,
    close: async () => {
      await queue.close();
      await board.close();
    },
  };
}

/** `bun run admin <command>`: opens DATABASE_URL, runs one command (doors/cli/), prints its answer. */
if (import.meta.main) {
  setLogLevel('warn');
  const config = loadConfig();
  configurePlans(config.plans);
  const storage = await openStorage(config.databaseUrl);
  let code = 0;
  try {
    const answer = await runAdmin(process.argv.slice(2), storage, config, openJobs);
    console.log(answer instanceof CsvText ? answer.text : JSON.stringify(answer, null, 2));
  } catch (e) {
    console.log(JSON.stringify({ error: (e as Error).message }));
    code = 1;
  } finally {
    await storage.close();
  }
  process.exit(code);
}
