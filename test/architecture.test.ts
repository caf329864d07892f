import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Kernel boundaries (docs/architecture.md): every difference between MySQL/MariaDB and SQLite
 * lives in adapters/storage/mysql/ and adapters/storage/sqlite/, behind the StorageDialect
 * interface (adapters/storage/dialect.ts). Nowhere else in adapters/storage/ or core/ does code
 * branch on the dialect, write one dialect's SQL, or know a driver's error codes.
 */

const ROOT = resolve(import.meta.dir, '..');
const DIALECT_FOLDERS = ['adapters/storage/mysql/', 'adapters/storage/sqlite/'];
/** The one file that names the dialects: it picks one by DATABASE_URL. */
const REGISTRY = 'adapters/storage/database.ts';

function files(folder: string): string[] {
  return [...new Bun.Glob('**/*.ts').scanSync({ cwd: join(ROOT, folder) })].map((f) => `${folder}${f}`).sort();
}

/** The code of a file with its comments blanked out (line numbers kept): comments may name a database. */
function code(path: string): string[] {
  return readFileSync(join(ROOT, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|\s)\/\/.*$/gm, '$1')
    .split('\n');
}

const shared = [...files('adapters/storage/'), ...files('core/')].filter((f) => !DIALECT_FOLDERS.some((d) => f.startsWith(d)));

/** What only a dialect may say, with the reason shown when a file says it. */
const FORBIDDEN: [RegExp, string][] = [
  [/\bdialect(\.name)?\s*[!=]==?/, 'a branch on the dialect'],
  [/[!=]==?\s*['"`](mysql|mariadb|sqlite)['"`]|['"`](mysql|mariadb|sqlite)['"`]\s*[!=]==?/i, 'a comparison with a dialect name'],
  [/\bis(mysql|mariadb|sqlite)\b/i, 'a dialect flag'],
  [/\bthis\.(mysql|mariadb|sqlite)\b/i, 'a dialect flag'],
  [/\b(mysql|mariadb|sqlite)\s*(\?|&&|\|\|)|(&&|\|\||!)\s*(mysql|mariadb|sqlite)\b/i, 'a branch on a dialect flag'],
  [
    /onDuplicateKeyUpdate|onConflict\s*\(|\.forUpdate\s*\(|FOR UPDATE|RETURNING\b/,
    'upsert or locking syntax of one dialect (dialect.upsert, dialect.locking)',
  ],
  [/STRAIGHT_JOIN|FORCE INDEX|CROSS JOIN|LAST_INSERT_ID/, 'a planner hint or function of one dialect (dialect.hints, dialect.sequences)'],
  [/WITHOUT ROWID|ENGINE\s*=|utf8mb4|\bMEDIUMTEXT\b|\bLONGTEXT\b/, 'DDL of one dialect (dialect.schema)'],
  [
    /\bER_[A-Z_]{3,}\b|\bSQLITE_[A-Z]+\b|PROTOCOL_CONNECTION_LOST|UNIQUE constraint failed|\berrno\b/,
    "a driver's error code (dialect.errors)",
  ],
];

describe('storage dialects', () => {
  test('the shared storage code and core/ were found', () => {
    expect(shared).toContain('adapters/storage/dialect.ts');
    expect(shared.filter((f) => f.startsWith('core/')).length).toBeGreaterThan(20);
  });

  test('no dialect branch, dialect SQL or driver error code outside adapters/storage/mysql/ and sqlite/', () => {
    const found: string[] = [];
    for (const file of shared) {
      code(file).forEach((line, i) => {
        for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  test(`only ${REGISTRY} imports a dialect folder`, () => {
    const found = shared.filter(
      (f) => f !== REGISTRY && code(f).some((line) => /from\s+['"][^'"]*\/(mysql|sqlite)\/[^'"]*['"]/.test(line)),
    );
    expect(found).toEqual([]);
  });

  test('each dialect folder holds <dialect>-<part>.ts files, one of them the dialect itself', () => {
    for (const folder of DIALECT_FOLDERS) {
      const name = folder.split('/').at(-2) as string;
      const names = files(folder).map((f) => f.slice(folder.length));
      expect(names.filter((n) => !new RegExp(`^${name}-[a-z-]+\\.ts$`).test(n))).toEqual([]);
      expect(names).toContain(`${name}-dialect.ts`);
    }
  });
});

describe('row writes', () => {
  const rows = files('adapters/storage/rows/');

  test('only rows/row-write.ts opens a row transaction or starts and ends a remembered-listing write', () => {
    // shared-totals.ts opens its own transactions too: they register and count filters, never write rows.
    const allowed = new Set(['adapters/storage/rows/row-write.ts', 'adapters/storage/rows/shared-totals.ts']);
    const found = rows.filter((f) => !allowed.has(f) && code(f).some((line) => /\.transaction\(\)|\.(beginWrite|endWrite)\(/.test(line)));
    expect(found).toEqual([]);
    const totals = code('adapters/storage/rows/shared-totals.ts');
    expect(totals.some((line) => /project_rows|cell_keys|beginWrite|endWrite/.test(line))).toBe(false);
  });

  test('row storage files stay small: one concept each', () => {
    const long = rows.filter((f) => code(f).length > 300);
    expect(long).toEqual([]);
  });
});
