import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { typescript5 } from '../scripts/console-types.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * A client generated from the document compiles (docs/api.md): openapi-typescript turns
 * `/docs/json` into types, and a small client typed by them — GET rows with page, page_size and
 * filter_groups, POST /projects — passes the TypeScript compiler. Were the query parameters of
 * GET rows missing from the document (the bug of issue 12), the same client would not compile.
 */

const ROOT = resolve(import.meta.dir, '..');
const FIXTURES = join(import.meta.dir, 'fixtures/openapi-typescript');
const GET_ROWS = '/api/enterprise/projects/{project_id}/rows';

/** The client: every type comes from the generated `paths` and `components`. */
const CLIENT = `import type { components, paths } from './api.d.ts';

type ListRows = paths['${GET_ROWS}']['get'];
type CreateProject = paths['/api/enterprise/projects']['post'];
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

async function call<T>(base: string, key: string, method: string, path: string, query?: object, body?: unknown): Promise<T> {
  const search = new URLSearchParams(Object.entries(query ?? {}).map(([k, v]) => [k, String(v)]));
  const headers: Record<string, string> = { 'service-api-key': key, 'content-type': 'application/json' };
  const res = await fetch(base + path + '?' + search, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as T;
}

export async function firstPage(base: string, key: string, projectId: string): Promise<string[]> {
  const path: ListRows['parameters']['path'] = { project_id: projectId };
  const groups: components['schemas']['FilterGroups'] = [{ type: 'and', rules: [{ col_id: 'c1', operator: 'contains', value: 'dent' }] }];
  const query: NonNullable<ListRows['parameters']['query']> = { page: 1, page_size: 25, filter_groups: JSON.stringify(groups) };
  // @ts-expect-error: the document types page as a number
  const wrong: NonNullable<ListRows['parameters']['query']> = { page: 'one' };
  void wrong;
  const page = await call<Json<ListRows['responses'][200]>>(base, key, 'GET', '/api/enterprise/projects/' + path.project_id + '/rows', query);
  const total: number = page.total_rows;
  return page.rows.map((row) => row.id + '/' + total);
}

export async function createProject(base: string, key: string): Promise<string> {
  const body: NonNullable<CreateProject['requestBody']>['content']['application/json'] = {
    builder_id: 'google_maps_search',
    form_data: { query: 'dentists in Lyon', max_results: 20 },
  };
  const created = await call<Json<CreateProject['responses'][201]>>(base, key, 'POST', '/api/enterprise/projects', {}, body);
  const short: Json<CreateProject['responses'][402]> = { detail: { code: 'insufficient_credits' } };
  void short;
  return created.project_id;
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM'],
    types: [],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
  },
  files: ['client.ts'],
};

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: stdout + stderr };
}

/** Generates `api.d.ts` from `document` in a fresh folder and compiles the client against it. */
async function compileClient(document: unknown): Promise<{ generated: string; code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    const gen = await run(
      [
        'node',
        '--import',
        join(FIXTURES, 'register.mjs'),
        join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'),
        'openapi.json',
        '-o',
        'api.d.ts',
      ],
      dir,
      { TYPESCRIPT_5: typescript5() },
    );
    if (gen.code !== 0) throw new Error(`openapi-typescript failed:\n${gen.output}`);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const tsc = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', dir], dir);
    return { generated: await Bun.file(join(dir, 'api.d.ts')).text(), ...tsc };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a client typed by openapi-typescript from the document', () => {
  let t: TestService;
  let doc: any;
  beforeAll(async () => {
    t = await startTestService('sqlite');
    doc = await (await fetch(`${t.url}/docs/json`)).json();
  });
  afterAll(() => t.stop());

  test('compiles: GET rows with page, page_size and filter_groups, POST /projects', async () => {
    const { generated, code, output } = await compileClient(doc);
    expect(generated).toContain('filter_groups?: string;');
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 30_000);

  test('does not compile against a document whose GET rows lost its query parameters', async () => {
    const broken = structuredClone(doc);
    const list = broken.paths[GET_ROWS].get;
    list.parameters = list.parameters.filter((p: any) => p.in !== 'query');
    const { code, output } = await compileClient(broken);
    expect(code).not.toBe(0);
    expect(output).toMatch(
      /error TS2322: Type '\{ page: number; page_size: number; filter_groups: string; \}' is not assignable to type 'never'/,
    );
  }, 30_000);
});
