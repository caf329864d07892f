import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Browser, chromium, type Frame, type Page } from 'playwright-core';
import { mcpAppHtml } from '../../mcp-app/build.ts';
import { CHROMIUM } from '../console/console-support.ts';
import { until } from '../support/until.ts';
import { type McpTestService, startMcpTestService } from './mcp-support.ts';

/**
 * The project table MCP App (docs/mcp.md), in a real Chromium inside a host page built on the
 * official Apps SDK's app-bridge: it renders a real project's rows from a tool result, shows a cell
 * a worker fills without a reload, and its buttons' tool calls reach the server and change the data.
 */

const APP_URI = 'ui://workflow-service/project-table.html';

describe('the project table MCP App', () => {
  let t: McpTestService;
  let client: Client;
  let browser: Browser;
  let hostScript: string;
  beforeAll(async () => {
    t = await startMcpTestService('sqlite');
    client = await t.client();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const built = await Bun.build({ entrypoints: [join(import.meta.dir, 'app-host/host.ts')], target: 'browser', format: 'esm' });
    if (!built.success) throw new Error(built.logs.map((l) => l.message).join('; '));
    hostScript = (await built.outputs[0]?.text()) ?? '';
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  test('the tools that name a project declare the app; it is served as text/html;profile=mcp-app with a strict CSP, small', async () => {
    const { tools } = await client.listTools();
    const withApp = tools.filter((x) => (x._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri === APP_URI);
    expect(withApp.map((x) => x.name).sort()).toEqual(['get_project', 'get_project_rows', 'run_builder', 'run_pending_columns']);
    const read = await client.readResource({ uri: APP_URI });
    const content = read.contents[0] as { mimeType: string; text: string; _meta?: { ui?: { csp?: Record<string, unknown[]> } } };
    expect(content.mimeType).toBe('text/html;profile=mcp-app');
    expect(content._meta?.ui?.csp).toEqual({ connectDomains: [], resourceDomains: [] });
    expect(content.text).toStartWith('<!doctype html>');
    expect(content.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/); // everything inline: nothing is fetched
    expect(Bun.gzipSync(content.text).length).toBeLessThan(150 * 1024);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(APP_URI);
  });

  /** Opens the host page with a tool's input and result; answers the page and the app's frame. */
  async function openHost(
    toolArgs: Record<string, unknown>,
    toolResult: unknown,
    theme: 'light' | 'dark' = 'light',
  ): Promise<{ page: Page; app: Frame; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
      if (process.env.DEBUG_APP) console.log('console', m.type(), m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.exposeFunction('callTool', (params: { name: string; arguments?: Record<string, unknown> }) => client.callTool(params));
    // The tool's input and result and the app's HTML, as a host would hold them (script-safe JSON).
    const data = (value: unknown) => JSON.stringify(value).replaceAll('</', '<\\/');
    const globals = `window.appHtml = ${data(await mcpAppHtml())}; window.toolArgs = ${data(toolArgs)}; window.toolResult = ${data(toolResult)}; window.hostTheme = ${data(theme)};`;
    await page.setContent(
      `<!doctype html><html><body><script>${globals}</script><script type="module">${hostScript.replaceAll('</script', '<\\/script')}</script></body></html>`,
    );
    await page
      .waitForFunction(() => window.hostReady === true, undefined, { timeout: 20_000 })
      .catch((e: Error) => {
        const frames = page.frames().map((f) => f.url());
        throw new Error(
          `the host never got ready (${e.message}); page errors: ${JSON.stringify(errors)}; frames ${JSON.stringify(frames)}`,
        );
      });
    const app = page.frames().find((f) => f !== page.mainFrame()) as Frame;
    return { page, app, errors };
  }

  test('renders the rows of a real project; a run started from its button fills cells that show without a reload', async () => {
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme\nGlobex\nInitech' } },
    });
    const projectId = made.body.project_id as string;
    await until(async () => ((await t.api('GET', `/projects/${projectId}`)).body.row_count === 3 ? true : undefined));
    const column = await t.api('POST', `/projects/${projectId}/columns`, {
      body: { name: 'Shout', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    expect(column.status).toBe(201);
    const args = { project_id: projectId };
    const result = await client.callTool({ name: 'get_project', arguments: args });
    const { page, app, errors } = await openHost(args, result);
    try {
      await app.waitForSelector('#table td', { timeout: 20_000 });
      const names = await app.$$eval('#table tr td:first-child', (tds) => tds.map((td) => td.textContent));
      expect(names.sort()).toEqual(['Acme', 'Globex', 'Initech']);
      expect(await app.textContent('#count')).toBe('rows 1–3 of 3');
      // The estimate first, then the run: the tool call goes through the host to the server.
      await app.click('#run');
      await app.waitForSelector('#confirm:not([hidden])');
      expect(await app.textContent('#confirm-text')).toMatch(/^Run 3 pending cells\?/);
      await app.click('#confirm-yes');
      await app
        .waitForFunction(
          () => {
            const at = [...document.querySelectorAll('#table th')].findIndex((th) => th.textContent === 'Shout') + 1;
            const shouts = [...document.querySelectorAll(`#table tr td:nth-child(${at})`)].map((td) => td.textContent);
            return shouts.sort().join(',') === 'ACME,GLOBEX,INITECH';
          },
          undefined,
          { timeout: 20_000 },
        )
        .catch(async (e) => {
          throw new Error(`${e.message}: the table shows ${await app.innerHTML('#table')} / ${await app.textContent('#message')}`);
        });
      const stored = await t.api('GET', `/projects/${projectId}/rows?format=values`);
      expect((stored.body.rows as { values: { Shout: string } }[]).map((r) => r.values.Shout).sort()).toEqual([
        'ACME',
        'GLOBEX',
        'INITECH',
      ]);
      // A filter by a column's value asks the server again.
      await app.selectOption('#filter-column', { label: 'Name' });
      await app.fill('#filter-value', 'glob');
      await app.click('#filter-apply');
      await app
        .waitForFunction(() => document.querySelector('#count')?.textContent === 'rows 1–1 of 1 (filtered)', undefined, { timeout: 20_000 })
        .catch(async (e) => {
          throw new Error(`${e.message}: ${await app.textContent('#count')} / ${await app.textContent('#message')}`);
        });
      // MCP_APP_SCREENSHOT=1 retakes the picture in docs/mcp.md.
      if (process.env.MCP_APP_SCREENSHOT) await page.screenshot({ path: join(import.meta.dir, '../../docs/images/mcp-app.png') });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test("follows the host's theme: light and dark are both readable", async () => {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' } } });
    const args = { project_id: made.body.project_id };
    const result = await client.callTool({ name: 'get_project', arguments: args });
    const colours: Record<string, [string, string]> = {};
    for (const theme of ['light', 'dark'] as const) {
      const { page, app, errors } = await openHost(args, result, theme);
      try {
        await app.waitForSelector('#table th');
        colours[theme] = await app.evaluate(() => {
          const style = getComputedStyle(document.body);
          return [style.backgroundColor, style.color] as [string, string];
        });
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    }
    expect(colours.light).toEqual(['rgb(255, 255, 255)', 'rgb(29, 33, 39)']);
    expect(colours.dark).toEqual(['rgb(22, 24, 28)', 'rgb(232, 234, 237)']);
  });
});
