import { loadConfig } from '../core/config.ts';
import { log } from '../core/log.ts';
import { startService } from './service.ts';

/** `bun run start`: REST, MCP host and in-process workers (SERVE=rest|mcp opens one door), configured from the environment (README). */
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startService(config);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await service.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  log.error('start-up failed', { error: (e as Error).message });
  process.exit(1);
});
