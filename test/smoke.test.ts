import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

describe.each(DIALECTS)('smoke on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  });
  afterAll(() => t.stop());
  test('builders list', async () => {
    const r = await t.api('GET', '/project-builders');
    expect(r.status).toBe(200);
  });
});
