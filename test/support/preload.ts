import { afterAll } from 'bun:test';
import { setLogLevel } from '../../core/log.ts';
import { stopTestDatabases } from './databases.ts';

// Quiet logs unless a test run asks for them (LOG_LEVEL=debug bun run test).
setLogLevel((process.env.LOG_LEVEL as 'debug' | undefined) ?? 'silent');

afterAll(async () => {
  await stopTestDatabases();
});
