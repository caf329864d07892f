import { loadConfig } from '../core/config.ts';
import { log } from '../core/log.ts';
import { runProcess } from './process-signals.ts';
import { startService } from './service.ts';

/** `bun run start`: REST, MCP host and in-process workers (SERVE=rest|mcp opens one door), configured from the environment (README). */
runProcess('service', async () => {
  const service = await startService(loadConfig());
  return {
    async stop(signal) {
      log.info('shutting down', { signal });
      await service.stop();
    },
  };
});
