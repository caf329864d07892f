import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { connectAgent } from '../oauth/oauth-support.ts';
import type { TestService } from '../support/test-service.ts';
import { accessible, OWNER, startConsole, stopConsole, watchPage } from './console-support.ts';

/**
 * The console in a real browser (docs/console.md): Debian's Chromium, driven by playwright-core, signs in
 * through the form, manages keys on Settings → Integrations → API and uses them against REST, opens
 * a project's table and watches a column fill without a reload. axe-core checks every page.
 */

describe('the console in Chromium', () => {
  let browser: Browser;
  let t: TestService;
  let origin: string;
  let page: Page;
  /** A key of the owner's workspace (`default`), for the API calls the test makes itself. */
  let ownerKey: string;
  /** The 300-row project of the grid test. */
  let gridProject: string;

  beforeAll(async () => {
    // Not signed in: the first test signs in through the form itself.
    ({ t, origin, ownerKey, browser, page } = await startConsole({ signIn: false }));
  }, 60_000);
  afterAll(() => stopConsole({ browser, t }));

  const rest = (key: string, path = '/projects') => fetch(`${t.url}${path}`, { headers: { 'service-api-key': key } });
  /** A POST with the owner's key, its JSON answer. */
  const restPost = async (path: string, body: unknown) =>
    (await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'service-api-key': ownerKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json())) as any;
  /** What the run panel says of an estimate (POST …/columns/estimate), as Chromium (en-US) writes the numbers. */
  const estimateText = (e: { cells: number; credits_max: number; credits_expected: number; balance: number; balance_after: number }) => {
    const n = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 1 });
    return `${n(e.cells)} ${e.cells === 1 ? 'cell' : 'cells'} to run; expected about ${n(e.credits_expected)} credits, at most ${n(e.credits_max)}; balance ${n(e.balance)} → about ${n(e.balance_after)} after.`;
  };

  test('the console has the service icon (its pages link it, the tab shows it)', async () => {
    const icon = await fetch(`${origin}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect((await icon.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  test('signing in through the form lands on the projects; a wrong password says so on the form', async () => {
    await page.goto(`${origin}/settings/integration?tab=api`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await accessible(page, 'sign-in page');
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .waitFor()
      .catch(async (e) => {
        throw new Error(`${e}; the page at ${page.url()} shows: ${(await page.locator('body').innerText()).slice(0, 500)}`);
      });
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong email or password');
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the person was going.
    await page.getByRole('heading', { name: 'Settings · Integrations · API' }).waitFor();
    expect(page.url()).toBe(`${origin}/settings/integration?tab=api`);
  });

  test('the sign-in form works from the keyboard alone', async () => {
    const keyboard = await browser.newPage();
    try {
      await keyboard.goto(`${origin}/login`);
      await keyboard.keyboard.press('Tab'); // the first field takes the focus
      expect(await keyboard.evaluate(() => document.activeElement?.id)).toBe('email');
      await keyboard.keyboard.type(OWNER.email);
      await keyboard.keyboard.press('Tab');
      expect(await keyboard.evaluate(() => document.activeElement?.id)).toBe('password');
      await keyboard.keyboard.type(OWNER.password);
      await keyboard.keyboard.press('Enter');
      await keyboard.getByRole('heading', { name: 'Projects' }).waitFor();
    } finally {
      await keyboard.close();
    }
  });

  test('dark mode follows the system: pages and the grid turn dark, and stay accessible', async () => {
    const dark = await browser.newPage({ colorScheme: 'dark' });
    watchPage(browser, dark);
    try {
      await dark.context().addCookies(await page.context().cookies());
      await dark.goto(`${origin}/`);
      await dark.getByRole('heading', { name: 'Projects' }).waitFor();
      const colours = await dark.evaluate(() => {
        const style = getComputedStyle(document.body);
        return { background: style.backgroundColor, text: style.color, grid: document.body.dataset.agThemeMode };
      });
      expect(colours).toEqual({ background: 'rgb(21, 23, 27)', text: 'rgb(230, 232, 236)', grid: 'dark' });
      await accessible(dark, 'projects page, dark');
    } finally {
      await dark.close();
    }
  });

  test('the nav is usable on a phone: at 390 px wide every link is on the screen and nothing scrolls sideways', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    watchPage(browser, phone);
    try {
      await phone.context().addCookies(await page.context().cookies());
      // The main nav, and on a settings page the settings' own nav too.
      for (const [path, navs] of [
        ['/', ['Main']],
        ['/settings/credits', ['Main', 'Settings']],
        ['/settings/integration?tab=api', ['Main', 'Settings']],
        ['/settings/members', ['Main', 'Settings']],
      ] as const) {
        await phone.goto(`${origin}${path}`);
        await phone.getByRole('navigation', { name: navs[navs.length - 1] }).waitFor();
        const { scrollWidth, links } = await phone.evaluate(
          (names) => ({
            scrollWidth: document.documentElement.scrollWidth,
            links: names.flatMap((n) =>
              [...document.querySelectorAll(`nav[aria-label="${n}"] a`)].map((a) => {
                const r = a.getBoundingClientRect();
                return { text: a.textContent, left: r.left, right: r.right };
              }),
            ),
          }),
          [...navs],
        );
        expect(links.length).toBeGreaterThan(navs.length);
        expect(scrollWidth).toBeLessThanOrEqual(390);
        for (const l of links) expect({ link: l.text, inside: l.left >= 0 && l.right <= 390 }).toEqual({ link: l.text, inside: true });
      }
    } finally {
      await phone.close();
    }
  });

  test('Settings → API: create a key and use it (200), rotate it (old 401, new 200), revoke it (401)', async () => {
    await page.goto(`${origin}/settings/integration?tab=api`);
    await accessible(page, 'API keys page');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = (await page.getByTestId('new-key').textContent()) as string;
    expect(created).toMatch(/^wfs_[0-9a-f]{8}_/);
    expect((await rest(created)).status).toBe(200);
    await page.getByRole('button', { name: 'Copy key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created);
    // The MCP configuration shows the new key, ready to paste.
    expect(
      JSON.parse((await page.getByTestId('mcp-config').textContent()) as string).mcpServers['workflow-service'].headers['service-api-key'],
    ).toBe(created);
    const prefix = created.slice(0, 12);
    // Rotating ends the old key: it asks first, and a No changes nothing.
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('button', { name: `Rotate ${prefix}` }).click();
    expect((await rest(created)).status).toBe(200);
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: `Rotate ${prefix}` }).click();
    await page.getByText(`New key replacing ${prefix}`).waitFor();
    const rotated = (await page.getByTestId('new-key').textContent()) as string;
    expect(rotated).not.toBe(created);
    expect(asked).toContain('stops working now');
    expect((await rest(created)).status).toBe(401);
    expect((await rest(rotated)).status).toBe(200);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: `Revoke ${rotated.slice(0, 12)}` }).click();
    await page
      .locator(`tr[data-prefix="${rotated.slice(0, 12)}"]`)
      .getByText('revoked')
      .waitFor();
    expect((await rest(rotated)).status).toBe(401);
  });

  test('Settings → API: a key with a monthly credit cap (0 refused), its spending shown, the cap changed and removed from the table', async () => {
    const workspaces = t.service.kernel.storage.workspaces;
    const workspace = (await workspaces.findByName('default'))?.id as string;
    const keys = () => workspaces.listKeys(workspace);
    const capOf = async (prefix: string) => (await keys()).find((k) => k.prefix === prefix)?.monthlyCredits;
    await page.goto(`${origin}/settings/integration?tab=api`);
    const capInput = page.getByLabel('Monthly credit cap', { exact: true });
    // 0 is refused: the service's error shows, on the field too, and no key is made.
    const before = (await keys()).length;
    await capInput.fill('0');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('whole number');
    expect(await capInput.getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'API keys page with a refused cap');
    expect((await keys()).length).toBe(before);

    await capInput.fill('5');
    await page.getByRole('button', { name: 'Create key' }).click();
    const created = (await page.getByTestId('new-key').textContent()) as string;
    const prefix = created.slice(0, 12);
    const cap = page.locator(`tr[data-prefix="${prefix}"] [data-testid="cap"]`);
    await page.locator(`tr[data-prefix="${prefix}"] [data-testid="cap"]`, { hasText: /^0 of 5 this month$/ }).waitFor();
    expect(await capOf(prefix)).toBe(5);
    expect(await capInput.inputValue()).toBe('');
    expect(await page.getByRole('alert').count()).toBe(0);

    const change = page.getByRole('button', { name: `Change cap of ${prefix}` });
    const dialog = page.getByRole('dialog', { name: `Monthly cap of ${prefix}` });
    const field = dialog.getByLabel(`Monthly credit cap of ${prefix}`);
    // 0 in the dialog: the error shows there, the cap stays 5.
    await change.click();
    expect(await field.inputValue()).toBe('5');
    await field.fill('0');
    await dialog.getByRole('button', { name: 'Save cap' }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toContain('whole number');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'cap dialog with an error');
    expect(await capOf(prefix)).toBe(5);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await cap.textContent()).toBe('0 of 5 this month');

    // 7, and what the key spends shows against it.
    await change.click();
    await field.fill('7');
    await dialog.getByRole('button', { name: 'Save cap' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator(`tr[data-prefix="${prefix}"] [data-testid="cap"]`, { hasText: /^0 of 7 this month$/ }).waitFor();
    expect(await capOf(prefix)).toBe(7);
    // The focus is back on the button that opened the dialog.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Change cap of ${prefix}`);
    const project = await fetch(`${t.url}/projects`, {
      method: 'POST',
      headers: { 'service-api-key': created, 'content-type': 'application/json' },
      body: JSON.stringify({ builder_id: 'google_maps_search', form_data: { query: 'cafes in Ghent', max_results: 2 } }),
    }).then((r) => r.json() as Promise<{ project_id: string }>);
    for (
      let i = 0;
      i < 200 && ((await (await rest(ownerKey, `/projects/${project.project_id}`)).json()) as any).builder_status.type !== 'completed';
      i++
    )
      await Bun.sleep(25);
    const spent = (await t.service.kernel.storage.credits.keyMonth((await keys()).find((k) => k.prefix === prefix)?.id as string))?.spent;
    expect(spent).toBeGreaterThan(0);
    await page.reload();
    await page.locator(`tr[data-prefix="${prefix}"] [data-testid="cap"]`, { hasText: `${spent} of 7 this month` }).waitFor();

    // Empty removes the cap.
    await change.click();
    await field.fill('');
    await dialog.getByRole('button', { name: 'Save cap' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.locator(`tr[data-prefix="${prefix}"] [data-testid="cap"]`, { hasText: /^No cap$/ }).waitFor();
    expect(await capOf(prefix)).toBeNull();
    await page.reload();
    expect(await cap.textContent()).toBe('No cap');
  });

  test('a project opens as a grid, and a formula column fills in it without a reload', async () => {
    const csv = `Name\n${Array.from({ length: 300 }, (_, i) => `Company ${i}`).join('\n')}`;
    const created = await fetch(`${t.url}/projects`, {
      method: 'POST',
      headers: { 'service-api-key': ownerKey, 'content-type': 'application/json' },
      body: JSON.stringify({ builder_id: 'csv_import_builder', form_data: { csv_text: csv }, name: 'Grid test' }),
    }).then((r) => r.json() as Promise<{ project_id: string }>);
    const id = created.project_id;
    gridProject = id;
    for (let i = 0; i < 200 && ((await (await rest(ownerKey, `/projects/${id}`)).json()) as any).builder_status.type !== 'completed'; i++)
      await Bun.sleep(25);
    await page.goto(`${origin}/`);
    await page.getByRole('link', { name: 'Grid test' }).click();
    await page.getByRole('heading', { name: 'Grid test' }).waitFor();
    await page.locator('p.meta', { hasText: /^300 rows/ }).waitFor();
    await page.locator('.ag-cell', { hasText: 'Company 0' }).first().waitFor();
    await accessible(page, 'project table');
    // The keyboard moves through the grid.
    await page.locator('.ag-cell', { hasText: 'Company 0' }).first().click();
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.ag-cell-focus').textContent()).toBe('Company 1');
    const column = await fetch(`${t.url}/projects/${id}/columns`, {
      method: 'POST',
      headers: { 'service-api-key': ownerKey, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } }),
    }).then((r) => r.json() as Promise<{ col_id: string }>);
    await page.getByRole('columnheader', { name: 'Upper' }).waitFor();
    const run = await fetch(`${t.url}/projects/${id}/columns/run`, {
      method: 'POST',
      headers: { 'service-api-key': ownerKey, 'content-type': 'application/json' },
      body: JSON.stringify({ col_ids: [column.col_id] }),
    });
    expect(run.status).toBe(200);
    // The cells change in place: the page is the same one (no navigation happened).
    const before = await page.evaluate(() => performance.timeOrigin);
    await page.locator('.ag-cell', { hasText: 'COMPANY 0' }).first().waitFor();
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(before);
  });

  test('the filter and sort builders show what the API answers for the same filter_groups and sort_rules', async () => {
    await page.goto(`${origin}/projects/${gridProject}`);
    await page.locator('.ag-cell', { hasText: 'Company 0' }).first().waitFor();
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByRole('dialog', { name: 'Filter and sort' }).waitFor();
    await page.getByRole('button', { name: 'Add rule to group 1', exact: true }).click();
    await page.getByLabel('Column of rule 1.1').selectOption({ label: 'Name' });
    await page.getByLabel('Operator of rule 1.1').selectOption('contains');
    await page.getByLabel('Value of rule 1.1').fill('7');
    await page.getByRole('button', { name: 'Add group to group 1', exact: true }).click();
    await page.getByLabel('Match of group 1.2').selectOption('or');
    await page.getByRole('button', { name: 'Add rule to group 1.2', exact: true }).click();
    await page.getByLabel('Column of rule 1.2.1').selectOption({ label: 'Name' });
    await page.getByLabel('Operator of rule 1.2.1').selectOption('ends_with');
    await page.getByLabel('Value of rule 1.2.1').fill('3');
    await page.getByRole('button', { name: 'Add sort' }).click();
    await page.getByLabel('Column of sort rule 1').selectOption({ label: 'Name' });
    await page.getByLabel('Direction of sort rule 1').selectOption('desc');
    await page.getByRole('button', { name: 'Apply' }).click();
    // The same query, asked of the API.
    const project = (await (await rest(ownerKey, `/projects/${gridProject}`)).json()) as any;
    const nameCol = project.columns.find((c: any) => c.name === 'Name').col_id;
    const filter = [
      {
        type: 'and',
        rules: [
          { col_id: nameCol, operator: 'contains', value: '7' },
          { type: 'or', rules: [{ col_id: nameCol, operator: 'ends_with', value: '3' }] },
        ],
      },
    ];
    const sort = [{ col_id: nameCol, direction: 'desc', sort_as_number: false }];
    const q = `filter_groups=${encodeURIComponent(JSON.stringify(filter))}&sort_rules=${encodeURIComponent(JSON.stringify(sort))}&page_size=10`;
    const answer = (await (await rest(ownerKey, `/projects/${gridProject}/rows?${q}`)).json()) as any;
    expect(answer.total_rows).toBe(3); // Company 73, 173, 273
    const expected = answer.rows.map((r: any) => r.company.Name.value);
    await page
      .getByTestId('row-count')
      .filter({ hasText: new RegExp(`^${answer.total_rows} of 300 rows`) })
      .waitFor();
    await page.locator('.ag-row[row-index="0"] .ag-cell', { hasText: expected[0] }).first().waitFor();
    await accessible(page, 'filter and sort panel');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Filter and sort' }).waitFor({ state: 'detached' });
    const shown = await page.locator('.ag-row').evaluateAll(
      (rows, col) =>
        rows
          .map((r) => [Number(r.getAttribute('row-index')), r.querySelector(`[col-id="${col}"]`)?.textContent ?? ''] as const)
          .sort((a, b) => a[0] - b[0])
          .map(([, name]) => name),
      nameCol,
    );
    // Every row the API answered is on screen, in the same order (the grid draws at least these 3).
    expect(shown.slice(0, expected.length)).toEqual(expected);
    // What is on shows in the toolbar: a chip per rule and the sort.
    await page.getByText('Name contains 7').waitFor();
    await page.getByText('Sorted by Name ↓').waitFor();
    await accessible(page, 'a filtered table');
  });

  test('a tool column from the catalog (config form, run condition, auto-run, waterfall), then its cost estimate and run', async () => {
    await page.goto(`${origin}/projects/${gridProject}`);
    await page.locator('.ag-cell', { hasText: 'Company 0' }).first().waitFor();
    await page.getByRole('button', { name: '+ Column' }).click();
    await page.getByLabel('Column name *').fill('Lower');
    await page.getByLabel('Tool', { exact: true }).selectOption('formula');
    await page.getByLabel('Expression *').fill('$lowercase(Name)');
    await page.getByLabel(/Run only when/).fill('Name != "Company 1"');
    await page.getByLabel(/auto-run/).check();
    await page.getByRole('button', { name: 'Add column' }).click();
    await page.getByRole('columnheader', { name: 'Lower' }).waitFor();
    await page.getByRole('button', { name: '+ Column' }).click();
    // A waterfall: the name when it holds a 5, else the next step's answer.
    await page.getByLabel('Column name *').fill('Pick');
    await page.getByLabel('Tool', { exact: true }).selectOption('formula');
    await page.getByLabel('Expression *').fill('$contains(Name, "5") ? Name : null');
    await page.getByRole('button', { name: 'Add a fallback tool (waterfall)' }).click();
    await page.getByLabel('Tool of step 2').selectOption('formula');
    await page.getByLabel('Expression *').nth(1).fill('"fallback"');
    await page.getByRole('button', { name: 'Add column' }).click();
    await page
      .getByRole('columnheader', { name: 'Pick' })
      .waitFor()
      .catch(async (e) => {
        throw new Error(`${e}; the page says: ${await page.locator('[role=alert]').allTextContents()}`);
      });
    const project = (await (await rest(ownerKey, `/projects/${gridProject}`)).json()) as any;
    const lower = project.columns.find((c: any) => c.name === 'Lower');
    expect(lower).toMatchObject({ tool_id: 'formula', auto_run: true, run_condition: 'Name != "Company 1"' });
    expect(project.columns.find((c: any) => c.name === 'Pick').waterfall.map((w: any) => w.tool_id)).toEqual(['formula', 'formula']);

    const runFromMenu = async (column: string, item = 'Run pending cells…') => {
      await page.getByRole('button', { name: `Column menu of ${column}` }).click();
      await page.getByRole('menuitem', { name: item }).click();
      await page.getByTestId('estimate').waitFor();
    };
    await runFromMenu('Lower');
    // The panel says what the estimate endpoint says (the run condition's row counts, free: formula costs nothing).
    const shownEstimate = await page.getByTestId('estimate').textContent();
    const lowerEstimate = await restPost(`/projects/${gridProject}/columns/estimate`, { col_ids: [lower.col_id] });
    expect(lowerEstimate).toMatchObject({ cells: 300, credits_max: 0, credits_expected: 0 });
    expect(shownEstimate).toBe(estimateText(lowerEstimate));
    expect(await page.getByTestId('estimate-warning').count()).toBe(0);
    await page.getByRole('button', { name: 'Run 300 cells' }).click();
    await page.getByText('300 cells queued').waitFor();
    await page
      .locator('.ag-cell', { hasText: /^company 0$/ })
      .first()
      .waitFor();
    await page.locator('.ag-row[row-index="1"] .badge-skipped').waitFor();
    // The reason is written beside the badge.
    expect(await page.locator('.ag-row[row-index="1"] .ag-cell', { has: page.locator('.badge-skipped') }).textContent()).toContain(
      'run condition',
    );
    await page.keyboard.press('Escape');
    await runFromMenu('Pick');
    await page.getByRole('button', { name: 'Run 300 cells' }).click();
    await page.keyboard.press('Escape');
    await page.locator('.ag-row[row-index="0"] .ag-cell', { hasText: 'fallback' }).waitFor();
    await page
      .locator('.ag-row[row-index="5"] .ag-cell', { hasText: /^Company 5$/ })
      .nth(1)
      .waitFor();

    // A paid column (ai_prompt: 1 credit per row sent, answered offline in sandbox mode) over 3 rows, run with a cap.
    const small = await restPost('/projects', {
      builder_id: 'csv_import_builder',
      form_data: { csv_text: 'Name\nAcme\nGlobex\nInitech' },
      name: 'Capped run',
    });
    for (
      let i = 0;
      i < 200 && ((await (await rest(ownerKey, `/projects/${small.project_id}`)).json()) as any).builder_status.type !== 'completed';
      i++
    )
      await Bun.sleep(25);
    const blurb = await restPost(`/projects/${small.project_id}/columns`, {
      name: 'Blurb',
      tool_id: 'ai_prompt',
      config: { model: 'gpt-4o-mini', prompt: 'In one line, who is {{Name}}?' },
    });
    expect(blurb.col_id).toBeString();
    const statuses = async () => {
      const rows = ((await (await rest(ownerKey, `/projects/${small.project_id}/rows`)).json()) as any).rows;
      return rows.map((r: any) => r.company.Blurb.status as string).sort();
    };
    await page.goto(`${origin}/projects/${small.project_id}`);
    await page.locator('.ag-cell', { hasText: 'Acme' }).first().waitFor();
    await runFromMenu('Blurb');
    const shownPaid = await page.getByTestId('estimate').textContent();
    const paid = await restPost(`/projects/${small.project_id}/columns/estimate`, { col_ids: [blurb.col_id] });
    expect(paid).toMatchObject({ cells: 3, credits_max: 3, credits_expected: 3 });
    expect(shownPaid).toBe(estimateText(paid));
    const cap = page.getByLabel('Stop after this many credits (optional)');
    const runRequest = () => page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/columns/run'));
    // 0 is refused (422): the error shows next to the field, and nothing runs.
    await cap.fill('0');
    let sent = runRequest();
    await page.getByRole('button', { name: 'Run 3 cells' }).click();
    expect((await sent).postDataJSON()).toEqual({ col_ids: [blurb.col_id], mode: 'pending', max_credits: 0 });
    await expect(page.locator('#run-max-credits-error').getByRole('alert').textContent()).resolves.toContain(
      'whole number of credits above 0',
    );
    expect(await cap.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('status').count()).toBe(0);
    await accessible(page, 'run panel with a refused cap');
    expect(await statuses()).toEqual(['pending', 'pending', 'pending']);
    // A cap of 1: the run stops charging after one cell; the other two stay pending.
    await cap.fill('1');
    expect(await cap.getAttribute('aria-invalid')).toBe('false');
    sent = runRequest();
    await page.getByRole('button', { name: 'Run 3 cells' }).click();
    expect((await sent).postDataJSON()).toEqual({ col_ids: [blurb.col_id], mode: 'pending', max_credits: 1 });
    await page.getByRole('status').filter({ hasText: '3 cells queued; the run stops charging at 1 credit and' }).waitFor();
    await page.locator('.ag-cell', { hasText: '[sandbox answer]' }).first().waitFor();
    let settled: string[] = [];
    for (let i = 0; i < 200; i++) {
      settled = await statuses();
      if (!settled.some((s) => s === 'queued' || s === 'running')) break;
      await Bun.sleep(25);
    }
    expect(settled).toEqual(['completed', 'pending', 'pending']);
    // The estimate follows: the two cells left, at a credit each.
    await page.reload();
    await page.locator('.ag-cell', { hasText: 'Acme' }).first().waitFor();
    await runFromMenu('Blurb');
    const shownLeft = await page.getByTestId('estimate').textContent();
    const left = await restPost(`/projects/${small.project_id}/columns/estimate`, { col_ids: [blurb.col_id] });
    expect(left).toMatchObject({ cells: 2, credits_max: 2 });
    expect(shownLeft).toBe(estimateText(left));
    await page.getByRole('button', { name: 'Run 2 cells' }).waitFor();
  });

  test('New project: the builder form is drawn from its schema, server errors show on the fields, the new table fills', async () => {
    await page.goto(`${origin}/`);
    await page.getByRole('link', { name: 'New project' }).click();
    await page.getByRole('radio', { name: /Google Maps search/ }).check();
    await accessible(page, 'new project form');
    await page.getByLabel('Query *').fill('florists in Utrecht');
    await page.getByLabel('Max results *').fill('0');
    await page.getByRole('button', { name: 'Create project' }).click();
    // The service's 400 names the field; the form shows it there and keeps what was typed.
    await page.locator('#f-form_data-max_results-error').waitFor();
    expect(await page.getByLabel('Max results *').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Query *').inputValue()).toBe('florists in Utrecht');
    await page.getByLabel('Max results *').fill('8');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Google Maps: florists in Utrecht' }).waitFor();
    await page.locator('p.meta', { hasText: /^8 rows/ }).waitFor();
    await page.locator('.ag-cell', { hasText: 'Florist' }).first().waitFor();
    await page.getByText(/Builder log/).click();
    await page
      .locator('ol.log', { hasText: 'completed' })
      .waitFor()
      .catch(async (e) => {
        throw new Error(`${e}; the log shows: ${await page.locator('details').allInnerTexts()}`);
      });
    expect(await page.locator('ol.log').textContent()).not.toContain('page page');

    // Nested filters, lists and ranges: the companies search.
    await page.goto(`${origin}/projects/new`);
    await page.getByRole('radio', { name: /Company search/ }).check();
    await page.getByLabel('Organization locations').fill('Berlin, Paris');
    await page.getByLabel('Max results *').fill('5');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.locator('p.meta', { hasText: /^5 rows/ }).waitFor();
  });

  test('Settings → Credits shows the balance, spending per tool as bars, and the ledger', async () => {
    const created = await fetch(`${t.url}/projects`, {
      method: 'POST',
      headers: { 'service-api-key': ownerKey, 'content-type': 'application/json' },
      body: JSON.stringify({ builder_id: 'google_maps_search', form_data: { query: 'bakeries in Porto', max_results: 7 } }),
    }).then((r) => r.json() as Promise<{ project_id: string }>);
    for (
      let i = 0;
      i < 200 && ((await (await rest(ownerKey, `/projects/${created.project_id}`)).json()) as any).builder_status.type !== 'completed';
      i++
    )
      await Bun.sleep(25);
    const credits = (await (await rest(ownerKey, '/credits')).json()) as any;
    await page.goto(`${origin}/settings/credits`);
    await page.getByRole('heading', { name: 'Settings · Credits' }).waitFor();
    expect(await page.getByTestId('balance').textContent()).toBe(credits.balance.toLocaleString('en-US'));
    // Named as people know the builder, not by its id.
    const usage = page.getByRole('table', { name: 'Spent per tool, last 30 days' }).getByRole('row', { name: /Google Maps search/ });
    await usage.waitFor();
    const spent = credits.usage.find((u: any) => u.plugin_id === 'google_maps_search').credits;
    expect(spent).toBeGreaterThanOrEqual(7);
    expect(await usage.getByRole('cell').last().textContent()).toBe(spent.toLocaleString('en-US'));
    await page.getByRole('heading', { name: 'Ledger' }).waitFor();
    expect(await page.getByRole('row', { name: /reserve/ }).count()).toBeGreaterThan(0);
    await accessible(page, 'credits page');
  });

  test('Settings → Members: invite a new person with a first password; they join by signing in; make them admin, remove them', async () => {
    await page.goto(`${origin}/settings/members`);
    await page.getByRole('heading', { name: 'Invite a member' }).waitFor();
    await accessible(page, 'members page');
    await page.getByLabel('Email').fill('new.person@example.com');
    await page.getByLabel('First password (for someone new: they sign in with it)').fill('short');
    await page.getByRole('button', { name: 'Invite' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('8 to 1024 characters');
    await page.getByLabel('First password (for someone new: they sign in with it)').fill('a-good-first-password');
    await page.getByRole('button', { name: 'Invite' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Invitation sent to new.person@example.com');
    await page.getByRole('button', { name: 'Withdraw the invitation of new.person@example.com' }).waitFor();
    await accessible(page, 'members page with an invitation');
    // They sign in with the first password, and so join.
    const signedIn = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'new.person@example.com', password: 'a-good-first-password' }),
    });
    expect(signedIn.status).toBe(200);
    await page.reload();
    const role = page.getByLabel('Role of new.person@example.com');
    await role.waitFor();
    await role.selectOption('admin');
    // Saved: the page read after a reload shows it.
    const workspace = (await t.service.kernel.storage.workspaces.findByName('default'))?.id as string;
    const roleOf = async () =>
      (await t.service.kernel.storage.users.members(workspace)).find((m) => m.user.email === 'new.person@example.com')?.role;
    for (let i = 0; i < 100 && (await roleOf()) !== 'admin'; i++) await Bun.sleep(25);
    await page.reload();
    expect(await page.getByLabel('Role of new.person@example.com').inputValue()).toBe('admin');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: 'Remove new.person@example.com' }).click();
    await page.getByLabel('Role of new.person@example.com').waitFor({ state: 'detached' });
    expect(asked).toContain('Remove new.person@example.com from this workspace?');
  });

  test('Settings → Connected apps lists an application connected by browser sign-in; Disconnect stops its token', async () => {
    const mcpUrl = t.service.mcpUrl as string;
    const { client, tokens } = await connectAgent(origin, mcpUrl, OWNER, 'Console Test Agent');
    // The consent page the agent's authorization request shows (no JavaScript, no console bundle) passes axe too.
    const consent = new URL(`${origin}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'http://127.0.0.1:43124/callback',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      resource: mcpUrl,
    }))
      consent.searchParams.set(k, v);
    await page.goto(consent.href);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await accessible(page, 'OAuth consent page');
    const mcpStatus = async () =>
      (
        await fetch(mcpUrl, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tokens.access_token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
      ).status;
    expect(await mcpStatus()).toBe(200);
    await page.goto(`${origin}/settings/integration?tab=api`);
    expect(await page.getByTestId('mcp-url').textContent()).toBe(mcpUrl);
    await page.getByRole('link', { name: 'Connected apps' }).first().click();
    await page.getByRole('heading', { name: 'Settings · Connected apps' }).waitFor();
    await page.getByRole('cell', { name: /^Console Test Agent/ }).waitFor();
    await accessible(page, 'Connected apps page');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Disconnect Console Test Agent' }).click();
    await page.getByText('Console Test Agent is disconnected').waitFor();
    expect(await mcpStatus()).toBe(401);
    await page.getByText('No application is connected to this workspace.').waitFor();
  });

  test('a 100,000-row project scrolls to its end, and Go to row jumps anywhere', async () => {
    const storage = t.service.kernel.storage;
    const workspace = (await storage.workspaces.findByName('default'))?.id as string;
    const project = await storage.projects.create({
      workspaceId: workspace,
      creatorId: 'test',
      name: 'Big table',
      builderId: null,
      formData: null,
      columns: [{ name: 'Name', type: 'input' }],
    });
    const [name] = await storage.projects.columns(project.pk);
    for (let i = 0; i < 100_000; i += 5_000) {
      await storage.rows.insert(
        project.pk,
        [name!],
        Array.from({ length: 5_000 }, (_, k) => ({ [name!.no]: { v: `Row ${i + k + 1}` } })),
      );
    }
    await page.goto(`${origin}/projects/${project.id}`);
    await page.locator('p.meta', { hasText: /^100,000 rows/ }).waitFor();
    await page.locator('.ag-row[row-index="0"] .ag-cell', { hasText: 'Row 1' }).first().waitFor();
    // Scroll with the mouse wheel to the bottom, as a person would (the grid fetches the blocks on the way).
    await page.locator('.ag-row[row-index="3"]').first().hover();
    const last = page.locator('.ag-row[row-index="99999"] .ag-cell', { hasText: /^Row 100000$/ });
    for (let i = 0; i < 40 && !(await last.isVisible()); i++) {
      await page.mouse.wheel(0, 200_000);
      await Bun.sleep(100);
    }
    await page.locator('.ag-row[row-index="99999"] .ag-cell', { hasText: /^Row 100000$/ }).waitFor();
    // The jump asks for its rows once (its early request is the one the grid uses, not a second).
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (/\/rows\?page=544&/.test(r.url())) asked.push(r.url());
    };
    page.on('request', onRequest);
    await page.getByLabel('Go to row').fill('54321');
    await page.getByRole('button', { name: 'Go', exact: true }).click();
    await page.locator('.ag-row[row-index="54320"] .ag-cell', { hasText: /^Row 54321$/ }).waitFor();
    page.off('request', onRequest);
    expect(asked).toHaveLength(1);
  }, 60_000);

  test("another workspace's project is not found in the console", async () => {
    const other = await fetch(`${t.url}/projects`, {
      method: 'POST',
      headers: { 'service-api-key': t.key, 'content-type': 'application/json' },
      body: JSON.stringify({ builder_id: 'manual_list_builder', form_data: { companies: 'other.example.com' } }),
    }).then((r) => r.json() as Promise<{ project_id: string }>);
    await page.goto(`${origin}/projects/${other.project_id}`);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('does not exist in this workspace');
  });
});
