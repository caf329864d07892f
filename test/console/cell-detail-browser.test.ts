import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../support/test-service.ts';
import { accessible, restCall, startConsole, stopConsole } from './console-support.ts';

/**
 * The cell detail of the project table, in Debian's Chromium (as console-browser.test.ts): a tool
 * cell opened by a click or by Enter on the focused cell shows its value, status and provenance
 * (read with include=meta), "Not run yet" for a cell no tool has run on, "from cache (free)" for a
 * value reused from the workspace's cache; the dialog passes axe and gives the focus back to the cell.
 */

const DOMAINS = ['acme.example.com', 'globex.example.com', 'initech.example.com'];

describe('the cell detail in Chromium', () => {
  let browser: Browser;
  let t: TestService;
  let origin: string;
  let page: Page;
  /** A key of the owner's workspace (`default`), the one the console signs in to. */
  let ownerKey: string;

  beforeAll(async () => {
    ({ t, origin, ownerKey, browser, page } = await startConsole());
  }, 60_000);
  afterAll(() => stopConsole({ browser, t }));

  /** A REST call with the owner's key: its JSON answer, or an error unless 2xx. */
  async function rest(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await restCall(t.url, ownerKey, method, path, body);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  /** Waits until the project's builder and its queued or running cells have ended. */
  async function settled(projectId: string): Promise<void> {
    expect((await rest('GET', `/projects/${projectId}/wait?wait_seconds=20`)).ended).toBe(true);
  }

  /** A manual list of DOMAINS with a Stack column (tech_stack: a value that is an object; it declares a cacheKey) run. */
  async function projectWithStack(name: string): Promise<{ id: string; stack: string }> {
    const { project_id: id } = await rest('POST', '/projects', {
      builder_id: 'manual_list_builder',
      form_data: { companies: DOMAINS.join('\n') },
      name,
    });
    await settled(id);
    const { col_id: stack } = await rest('POST', `/projects/${id}/columns`, {
      name: 'Stack',
      tool_id: 'tech_stack',
      config: { url: '{{Domain}}' },
    });
    await rest('POST', `/projects/${id}/columns/run`, { col_ids: [stack] });
    await settled(id);
    return { id, stack };
  }

  const cellAt = (rowIndex: number, colId: string) => page.locator(`.ag-row[row-index="${rowIndex}"] .ag-cell[col-id="${colId}"]`).first();
  /** The grid cell that holds the browser's focus: [row-index, col-id]. */
  const focused = () =>
    page.evaluate(() => {
      const cell = document.activeElement?.closest('.ag-cell');
      return [cell?.closest('.ag-row')?.getAttribute('row-index') ?? null, cell?.getAttribute('col-id') ?? null];
    });
  /**
   * The dialog gone from the page (not only closed: a closed dialog leaves the accessibility tree at
   * once, before the page has handled its close event).
   */
  const closed = () => page.locator('dialog.cell-detail').waitFor({ state: 'detached' });
  /** The local date and time the browser writes for an ISO instant (what the dialog should show). */
  const local = (iso: string) => page.evaluate((at) => new Date(at).toLocaleString(), iso);

  test('a completed tool cell opens by click and by Enter: value, status, tool, provider, fetched at, credits; a pending cell is "Not run yet"', async () => {
    const { id, stack } = await projectWithStack('Provenance test');
    // A second tool column nobody ran: its cells are pending, with no provenance.
    const { col_id: later } = await rest('POST', `/projects/${id}/columns`, {
      name: 'Later',
      tool_id: 'domain_normalizer',
      config: { value: '{{Domain}}' },
    });
    const project = await rest('GET', `/projects/${id}`);
    const domain = project.columns.find((c: any) => c.name === 'Domain').col_id as string;
    const rows = (await rest('GET', `/projects/${id}/rows?include=meta`)).rows as any[];
    const first = rows[0].company.Stack;
    expect(first).toMatchObject({ status: 'completed', meta: { tool_id: 'tech_stack', credits: 0, cached: false } });
    expect(rows[1].company.Later).toMatchObject({ status: 'pending', meta: null });

    await page.goto(`${origin}/projects/${id}`);
    await page.getByRole('heading', { name: 'Provenance test' }).waitFor();
    await cellAt(0, domain).filter({ hasText: DOMAINS[0] }).waitFor();
    // The list of technologies shows by their names, not as JSON.
    const names = first.value.technologies.map((x: { name: string }) => x.name).join(', ');
    expect(names).not.toBe('');
    await cellAt(0, stack)
      .filter({ hasText: new RegExp(`^${names.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) })
      .waitFor();
    await accessible(page, 'project table with tool cells');

    // A click: the detail is read with include=meta when it opens.
    const dialog = page.getByRole('dialog', { name: 'Cell detail · Stack' });
    const read = page.waitForRequest((r) => r.method() === 'GET' && r.url().endsWith(`/projects/${id}/rows/${rows[0].id}?include=meta`));
    await cellAt(0, stack).click();
    await read;
    await dialog.getByTestId('meta-tool').waitFor();
    expect(await dialog.getByTestId('meta-tool').textContent()).toBe('tech_stack');
    expect(await dialog.getByTestId('meta-provider').textContent()).toBe(first.meta.provider);
    expect(await dialog.getByTestId('meta-credits').textContent()).toBe('0');
    expect(await dialog.getByTestId('meta-cached').count()).toBe(0);
    expect(await dialog.locator('[data-testid="meta-fetched-at"] time').getAttribute('datetime')).toBe(first.meta.fetched_at);
    expect(await dialog.getByTestId('meta-fetched-at').textContent()).toBe(await local(first.meta.fetched_at));
    expect(await dialog.getByTestId('cell-status').textContent()).toBe('completed');
    // The value whole, pretty-printed.
    expect(await dialog.getByTestId('cell-value').textContent()).toBe(JSON.stringify(first.value, null, 2));
    expect(await dialog.getByText('Not run yet').count()).toBe(0);
    await accessible(page, 'cell detail');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await closed();
    expect(await focused()).toEqual(['0', stack]);

    // The keyboard: an input cell opens nothing; Enter on a focused tool cell does, Escape closes it.
    await cellAt(1, domain).click();
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toEqual(['1', stack]);
    await page.keyboard.press('Enter');
    await dialog.getByTestId('meta-tool').waitFor();
    expect(await dialog.getByTestId('meta-tool').textContent()).toBe('tech_stack');
    expect(await dialog.getByTestId('meta-credits').textContent()).toBe('0');
    const second = rows[1].company.Stack;
    expect(await dialog.getByTestId('meta-fetched-at').textContent()).toBe(await local(second.meta.fetched_at));
    // The focus is in the dialog (on its button), and Enter did not close it.
    expect(await page.evaluate(() => document.activeElement?.closest('dialog')?.getAttribute('aria-labelledby'))).toBe('cell-detail-title');
    await page.keyboard.press('Escape');
    await closed();
    expect(await focused()).toEqual(['1', stack]);

    // The pending cell next to it.
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toEqual(['1', later]);
    await page.keyboard.press('Enter');
    const pending = page.getByRole('dialog', { name: 'Cell detail · Later' });
    await pending.getByText('Not run yet').waitFor();
    expect(await pending.getByTestId('cell-status').textContent()).toBe('pending');
    expect(await pending.getByTestId('meta-tool').count()).toBe(0);
    await accessible(page, 'cell detail of a pending cell');
    // Run while the detail is open: it reads the cell again when the cell changes.
    await rest('POST', `/projects/${id}/columns/run`, { col_ids: [later] });
    await pending.getByTestId('meta-tool').filter({ hasText: 'domain_normalizer' }).waitFor();
    expect(await pending.getByTestId('cell-status').textContent()).toBe('completed');
    expect(await pending.getByTestId('cell-value').textContent()).toBe(DOMAINS[1] as string);
    expect(await pending.getByText('Not run yet').count()).toBe(0);
    await page.keyboard.press('Escape');
    await closed();
    expect(await focused()).toEqual(['1', later]);
  });

  test('a value reused from the workspace cache says "from cache (free)", with when it was first found', async () => {
    // One project finds these stacks; another with the same input is then served from the workspace's cache.
    await projectWithStack('Stacks found');
    const { id, stack } = await projectWithStack('Cached stacks');
    const [first] = (await rest('GET', `/projects/${id}/rows?page_size=1`)).rows;
    const row = await rest('GET', `/projects/${id}/rows/${first.id}?include=meta`);
    expect(row.company.Stack).toMatchObject({ status: 'completed', meta: { tool_id: 'tech_stack', credits: 0, cached: true } });
    await page.goto(`${origin}/projects/${id}`);
    await cellAt(0, stack).filter({ hasText: row.company.Stack.value.technologies[0].name }).waitFor();
    await cellAt(0, stack).click();
    const dialog = page.getByRole('dialog', { name: 'Cell detail · Stack' });
    await dialog.getByTestId('meta-credits').waitFor();
    expect(await dialog.getByTestId('meta-credits').textContent()).toBe('0 · from cache (free)');
    expect(await dialog.getByTestId('meta-fetched-at').textContent()).toBe(await local(row.company.Stack.meta.fetched_at));
    await accessible(page, 'cell detail of a cached value');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await closed();
  });
});
