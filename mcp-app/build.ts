import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Bundles the project table MCP App (mcp-app/src) into one HTML document with its script and style
 * inline — a host renders it from the `ui://` resource alone, so nothing is fetched (its CSP allows
 * no origin). Built by Bun's bundler from node_modules at start-up when missing or older than its
 * sources, as the console is; `bun run mcp-app:build` builds it alone.
 */

const SRC = resolve(import.meta.dir, 'src');
const DIST = resolve(import.meta.dir, 'dist');
const OUT = join(DIST, 'project-table.html');

/** The newest of the sources and of this file (it holds the page around them). */
const newest = () => Math.max(statSync(import.meta.path).mtimeMs, ...readdirSync(SRC).map((f) => statSync(join(SRC, f)).mtimeMs));

let building: Promise<string> | undefined;

/** The app's HTML, built now if missing or older than its sources. */
export function mcpAppHtml(): Promise<string> {
  building ??= (async () => {
    if (existsSync(OUT) && statSync(OUT).mtimeMs >= newest()) return Bun.file(OUT).text();
    const built = await Bun.build({ entrypoints: [join(SRC, 'table-app.ts')], target: 'browser', minify: true, format: 'esm' });
    if (!built.success) throw new Error(`the MCP App did not build: ${built.logs.map((l) => l.message).join('; ')}`);
    const script = (await built.outputs[0]?.text()) ?? '';
    const style = await Bun.file(join(SRC, 'table-app.css')).text();
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Project table</title><style>${style}</style></head><body>
<header><h1 id="title">Project</h1><span id="count"></span>
<span id="filter"><select id="filter-column" aria-label="Column"></select><input id="filter-value" placeholder="contains…" aria-label="Value"><button id="filter-apply" type="button">Filter</button></span>
<button id="previous">Previous</button><button id="next">Next page</button><button id="run">Run pending cells</button>
<span id="message" class="message" role="status"></span></header>
<div id="confirm" hidden><span id="confirm-text"></span> <button id="confirm-yes">Run</button> <button id="confirm-no">Cancel</button></div>
<div class="scroll"><table id="table"></table></div>
<script type="module">${script.replaceAll('</script', '<\\/script')}</script></body></html>`;
    mkdirSync(DIST, { recursive: true });
    await Bun.write(OUT, html);
    return html;
  })();
  building.catch(() => {
    building = undefined;
  });
  return building;
}

if (import.meta.main) {
  const html = await mcpAppHtml();
  console.log(`${OUT}: ${html.length.toLocaleString('en-US')} bytes, ${Bun.gzipSync(html).length.toLocaleString('en-US')} gzip`);
}
