import { afterAll, beforeAll, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { addColumn, cellOf, csvProject, SERVICE_START_MS, setEnv, settledRows } from './plugins/enrich-helpers.ts';
import { startTestService, type TestService } from './support/test-service.ts';

let t: TestService;
let restore: () => void;
beforeAll(async () => {
  restore = setEnv({ PROBE_TOKEN: 'declared-value', BOOTSTRAP_API_KEY: 'bootstrap-secret' });
  t = await startTestService('sqlite', { PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/env-plugins') });
}, SERVICE_START_MS);
afterAll(async () => {
  await t.stop();
  restore();
});

test('ctx.env answers only the variables a plugin declares: never DATABASE_URL, the bootstrap key or PATH', async () => {
  process.env.DATABASE_URL = 'mysql://root:secret@db/prod';
  try {
    const pid = await csvProject(t, 'Variable\nPROBE_TOKEN\nDATABASE_URL\nBOOTSTRAP_API_KEY\nPATH');
    const col = await addColumn(t, pid, 'Seen', 'env_probe', { variable: '{{Variable}}' });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col] } });
    const rows = await settledRows(t, pid);
    expect(cellOf(rows, 'Variable', 'PROBE_TOKEN', 'Seen').value).toBe('declared-value');
    for (const hidden of ['DATABASE_URL', 'BOOTSTRAP_API_KEY', 'PATH'])
      expect(cellOf(rows, 'Variable', hidden, 'Seen').value).toBe('(nothing)');
  } finally {
    delete process.env.DATABASE_URL;
  }
});
