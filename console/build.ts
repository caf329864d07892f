import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Bundles the console (console/src, Preact and AG Grid from node_modules) into console/dist with
 * Bun's bundler: no CDN, nothing fetched at run time. `bun run start` calls ensureConsoleBuilt(), so
 * a fresh clone serves it; `bun run console:build` builds it alone.
 */

export const CONSOLE_ROOT = resolve(import.meta.dir);
const SRC = join(CONSOLE_ROOT, 'src');
export const DIST = join(CONSOLE_ROOT, 'dist');

export interface ConsoleBundle {
  /** Asset file names in DIST, by role. */
  script: string;
  style: string | undefined;
  /** When the sources were last changed (a newer change means a rebuild). */
  builtFrom: number;
}

function newestSource(dir = SRC): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let building: Promise<ConsoleBundle> | undefined;

/** The built console, built now if missing or older than its sources. */
export function ensureConsoleBuilt(): Promise<ConsoleBundle> {
  building ??= (async () => {
    const sources = newestSource();
    const manifest = join(DIST, 'manifest.json');
    if (existsSync(manifest)) {
      const known = (await Bun.file(manifest).json()) as ConsoleBundle;
      if (known.builtFrom >= sources && existsSync(join(DIST, known.script))) return known;
    }
    return build(sources);
  })().finally(() => {
    building = undefined;
  });
  return building;
}

async function build(sources: number): Promise<ConsoleBundle> {
  // Built next to DIST and moved in place at once: a process serving the old bundle never sees half a new one.
  const out = `${DIST}.${process.pid}.${Date.now()}`;
  mkdirSync(out, { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(SRC, 'main.tsx')],
    outdir: out,
    target: 'browser',
    minify: true,
    naming: '[name]-[hash].[ext]',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  if (!result.success) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(`the console did not build:\n${result.logs.map(String).join('\n')}`);
  }
  const names = result.outputs.map((o) => o.path.slice(out.length + 1));
  const bundle: ConsoleBundle = {
    script: names.find((n) => n.endsWith('.js')) as string,
    style: names.find((n) => n.endsWith('.css')),
    builtFrom: sources,
  };
  await Bun.write(join(out, 'manifest.json'), JSON.stringify(bundle));
  try {
    rmSync(DIST, { recursive: true, force: true });
    renameSync(out, DIST);
  } catch (e) {
    // Another process put its build in place meanwhile: the same sources, so the same bundle.
    rmSync(out, { recursive: true, force: true });
    if (!existsSync(join(DIST, 'manifest.json'))) throw e;
    return (await Bun.file(join(DIST, 'manifest.json')).json()) as ConsoleBundle;
  }
  return bundle;
}

if (import.meta.main) {
  const t0 = performance.now();
  const bundle = await ensureConsoleBuilt();
  console.log(JSON.stringify({ ...bundle, ms: Math.round(performance.now() - t0) }));
}
