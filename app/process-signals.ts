import { log } from '../core/log.ts';

/**
 * Runs `main` as a process does: a start-up failure is logged and exits 1; SIGTERM or SIGINT runs
 * `stop` once (a second signal while stopping changes nothing) and exits 0 once it is done.
 */
export function runProcess(what: string, main: () => Promise<{ stop(signal: string): Promise<void> }>): void {
  main()
    .then(({ stop }) => {
      let stopping = false;
      const shutdown = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        await stop(signal);
        process.exit(0);
      };
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
      process.on('SIGINT', () => void shutdown('SIGINT'));
    })
    .catch((e) => {
      log.error(`${what} start-up failed`, { error: (e as Error).message });
      process.exit(1);
    });
}
