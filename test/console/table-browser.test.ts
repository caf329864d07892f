import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../support/test-service.ts';
import { accessible, restCall, startConsole, stopConsole } from './console-support.ts';

/**
 * A project's table as people work in it (docs/console.md): the grid first with its toolbar, the view
 * (search, filter, sort, hidden columns) in the URL, widths that fit and are remembered, the column
 * menus, tool columns with their progress, values shown by their primary field, "Extract to column",
 * editing in place, the row detail, selected rows run / exported / deleted, export of the view.
 * Every check compares what the page shows with what the REST API answers.
 */

describe('a project table in Chromium', () => {
  let browser: Browser;
  let t: TestService;
  let origin: string;
  let page: Page;
  let ownerKey: string;
  let project: string;
  const call = (method: string, path: string, body?: unknown) => restCall(t.url, ownerKey, method, path, body);
  const columnsOf = async (id = project) => (await call('GET', `/projects/${id}`)).body.columns as any[];
  const colId = async (name: string) => (await columnsOf()).find((c) => c.name === name)?.col_id as string;
  /** The cell texts of one column, rows in grid order. */
  const shownColumn = (id: string) =>
    page.locator('.ag-row').evaluateAll(
      (rows, col) =>
        rows
          .map((r) => [Number(r.getAttribute('row-index')), r.querySelector(`[col-id="${col}"]`)?.textContent ?? ''] as const)
          .sort((a, b) => a[0] - b[0])
          .map(([, v]) => v),
      id,
    );
  const settle = async (id: string) => {
    for (let i = 0; i < 400; i++) {
      const w = await call('GET', `/projects/${id}/wait?wait_seconds=5`);
      if (w.body?.ended) return;
    }
  };
  /** A small project of its own (earlier tests change or delete the shared one), opened. */
  const openAny = async () => {
    const made = await call('POST', '/projects', {
      builder_id: 'csv_import_builder',
      form_data: { csv_text: 'Name,Website,Employees\nAcme 0,https://acme.example.com,12\nAcme 1,https://beta.example.com,40' },
    });
    project = made.body.project_id;
    await settle(project);
    await open();
  };
  const open = async (id = project) => {
    await page.goto(`${origin}/projects/${id}`);
    await page.locator('.ag-cell', { hasText: 'Acme 0' }).first().waitFor();
  };

  beforeAll(async () => {
    ({ t, origin, ownerKey, browser, page } = await startConsole());
    await page.setViewportSize({ width: 1280, height: 800 });
    const names = Array.from({ length: 30 }, (_, i) => `Acme ${i}`);
    const csv = `Name,Website,Employees\n${names.map((n, i) => `${n},https://www.acme${i}.example.com/about-us,${(i * 37) % 100}`).join('\n')}`;
    const made = await call('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv }, name: 'Table test' });
    project = made.body.project_id;
    await settle(project);
  }, 60_000);
  afterAll(() => stopConsole({ browser, t }));

  test('the grid comes first: toolbar on top, the grid to the bottom of the window, widths that fit and are remembered', async () => {
    await open();
    const grid = await page.getByRole('region', { name: 'Rows of the project' }).boundingBox();
    expect(grid?.y).toBeLessThan(200);
    expect((grid?.y ?? 0) + (grid?.height ?? 0)).toBeGreaterThan(740);
    await page.getByRole('toolbar', { name: 'Table' }).waitFor();
    const website = await colId('Website');
    const employees = await colId('Employees');
    const width = async (id: string) => (await page.locator(`.ag-header-cell[col-id="${id}"]`).boundingBox())?.width ?? 0;
    // The URLs get room; the numbers do not take the same.
    await page.waitForFunction(
      ([w, e]) =>
        (document.querySelector(`.ag-header-cell[col-id="${w}"]`)?.getBoundingClientRect().width ?? 0) >
        (document.querySelector(`.ag-header-cell[col-id="${e}"]`)?.getBoundingClientRect().width ?? 0) + 60,
      [website, employees],
    );
    const cell = page.locator(`.ag-row[row-index="0"] [col-id="${website}"]`);
    expect(await cell.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true); // not cut
    // A width a person drags is kept for the next visit.
    const handle = page.locator(`.ag-header-cell[col-id="${employees}"] .ag-header-cell-resize`);
    const box = await handle.boundingBox();
    if (!box) throw new Error('no resize handle');
    const before = await width(employees);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + 120, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const dragged = await width(employees);
    expect(dragged).toBeGreaterThan(before + 80);
    await open();
    await page.waitForFunction(
      ([id, w]) => {
        const now = document.querySelector(`.ag-header-cell[col-id="${id}"]`)?.getBoundingClientRect().width ?? 0;
        return Math.abs(now - Number(w)) < 3;
      },
      [employees, dragged] as const,
    );
    await accessible(page, 'the table');
  });

  test('search, filter chips and "n of m rows", sort by a header click, hidden columns: all in the URL and kept on reload', async () => {
    await open();
    // `/` goes to the search.
    await page.locator('.ag-cell', { hasText: 'Acme 0' }).first().click();
    await page.keyboard.press('Escape');
    await page.locator('body').press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Search rows');
    await page.keyboard.type('acme 1');
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^11 of 30 rows/ })
      .waitFor(); // Acme 1, 10…19
    expect(new URL(page.url()).searchParams.get('q')).toBe('acme 1');
    // A header click sorts: ascending, then descending.
    const name = await colId('Name');
    await page.getByRole('button', { name: 'Name', exact: true }).click();
    await page.getByRole('button', { name: 'Name (sorted ascending)', exact: true }).click();
    await page.getByRole('button', { name: 'Name (sorted descending)', exact: true }).waitFor();
    expect(JSON.parse(new URL(page.url()).searchParams.get('sort') ?? '[]')).toEqual([
      { col_id: name, direction: 'desc', sort_as_number: false },
    ]);
    const api = await call(
      'GET',
      `/projects/${project}/rows?page_size=100&filter_groups=${encodeURIComponent(
        JSON.stringify([
          { type: 'or', rules: (await columnsOf()).map((c) => ({ col_id: c.col_id, operator: 'contains', value: 'acme 1' })) },
        ]),
      )}&sort_rules=${encodeURIComponent(JSON.stringify([{ col_id: name, direction: 'desc', sort_as_number: false }]))}`,
    );
    const expected = api.body.rows.map((r: any) => r.company.Name.value);
    expect(expected.length).toBe(11);
    await page.waitForFunction(
      ([col, first]) => document.querySelector(`.ag-row[row-index="0"] [col-id="${col}"]`)?.textContent === first,
      [name, expected[0]],
    );
    expect((await shownColumn(name)).slice(0, 11)).toEqual(expected);
    // A filter from the column menu: a chip says it is on; numbers sort as numbers.
    const employees = await colId('Employees');
    await page.getByRole('button', { name: 'Column menu of Employees' }).click();
    await page.getByRole('menuitem', { name: 'Filter by this column…' }).click();
    const panel = page.getByRole('dialog', { name: 'Filter and sort' });
    await panel.getByLabel('Operator of rule 1.1').selectOption('gte');
    await panel.getByLabel('Value of rule 1.1').fill('50');
    await panel.getByRole('button', { name: 'Apply' }).click();
    await page.keyboard.press('Escape');
    await page.getByText('Employees ≥ 50').waitFor();
    const filtered = await call(
      'GET',
      `/projects/${project}/rows?page_size=100&filter_groups=${encodeURIComponent(
        JSON.stringify([
          {
            type: 'and',
            rules: [
              { type: 'and', rules: [{ col_id: employees, operator: 'gte', value: '50' }] },
              { type: 'or', rules: (await columnsOf()).map((c) => ({ col_id: c.col_id, operator: 'contains', value: 'acme 1' })) },
            ],
          },
        ]),
      )}`,
    );
    await page
      .getByTestId('row-count')
      .filter({ hasText: new RegExp(`^${filtered.body.total_rows} of 30 rows`) })
      .waitFor();
    // Hide a column from its menu.
    await page.getByRole('button', { name: 'Column menu of Website' }).click();
    await page.getByRole('menuitem', { name: 'Hide column' }).click();
    await page.getByRole('columnheader', { name: /Website/ }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Columns (1 hidden)' }).waitFor();
    // The whole view survives a reload.
    await page.reload();
    await page
      .getByTestId('row-count')
      .filter({ hasText: new RegExp(`^${filtered.body.total_rows} of 30 rows`) })
      .waitFor();
    expect(await page.getByLabel('Search rows').inputValue()).toBe('acme 1');
    await page.getByText('Employees ≥ 50').waitFor();
    await page.getByText('Sorted by Name ↓').waitFor();
    expect(await page.getByRole('columnheader', { name: /Website/ }).count()).toBe(0);
    await accessible(page, 'a table with a search, a filter, a sort and a hidden column');
    // Taken off one by one: the chip, the sort, the hidden column (from the Columns panel), the search.
    await page.getByRole('button', { name: 'Remove filter Employees ≥ 50' }).click();
    await page.getByRole('button', { name: 'Remove the sort' }).click();
    await page.getByRole('button', { name: 'Columns (1 hidden)' }).click();
    await page.getByRole('dialog', { name: 'Columns shown' }).getByLabel('Website').check();
    await page.keyboard.press('Escape');
    await page.getByRole('columnheader', { name: /Website/ }).waitFor();
    await page.getByLabel('Search rows').fill('');
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^30 rows/ })
      .waitFor();
    expect(new URL(page.url()).search).toBe('');
  });

  test('a column renamed and deleted from its menu (asked first, saying what goes); values and the API follow', async () => {
    await call('POST', `/projects/${project}/columns`, { name: 'Shout', tool_id: 'formula', config: { expression: '$uppercase(Name)' } });
    await open();
    await page.getByRole('button', { name: 'Column menu of Employees' }).click();
    await page.getByRole('menuitem', { name: 'Rename…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rename column Employees' });
    // A name another column has is refused, on the form.
    await dialog.getByLabel('Column name').fill('Name');
    await dialog.getByRole('button', { name: 'Save name' }).click();
    await dialog.getByRole('alert').waitFor();
    await dialog.getByLabel('Column name').fill('Staff');
    await dialog.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('columnheader', { name: /Staff/ }).waitFor();
    const rows = (await call('GET', `/projects/${project}/rows?page_size=3`)).body.rows;
    expect(rows[1].company.Staff.value).toBe('37');
    // Delete: the confirmation says what goes; dismissed, nothing happens.
    const messages: string[] = [];
    page.once('dialog', (d) => {
      messages.push(d.message());
      void d.dismiss();
    });
    await page.getByRole('button', { name: 'Column menu of Shout' }).click();
    await page.getByRole('menuitem', { name: 'Delete column…' }).click();
    await page.waitForFunction(() => true);
    expect(messages[0]).toContain('Delete the column “Shout”? Its results in 30 rows are deleted');
    expect((await columnsOf()).some((c) => c.name === 'Shout')).toBe(true);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Column menu of Shout' }).click();
    await page.getByRole('menuitem', { name: 'Delete column…' }).click();
    await page.getByRole('columnheader', { name: /Shout/ }).waitFor({ state: 'detached' });
    expect((await columnsOf()).some((c) => c.name === 'Shout')).toBe(false);
    await call('PATCH', `/projects/${project}/columns/${await colId('Staff')}`, { name: 'Employees' });
  });

  test('a tool column shows its tool and a live progress bar; failed cells re-run from its menu; its config edited', async () => {
    await call('POST', `/projects/${project}/columns`, {
      name: 'Ratio',
      tool_id: 'formula',
      // Rows whose Employees is a multiple of 10 fail (an unknown function), the others compute.
      config: { expression: '$number(Employees) % 10 = 0 ? $nope() : $number(Employees) / 10' },
    });
    await open();
    const header = page.getByRole('columnheader', { name: /Ratio/ });
    await header.getByText('Formula').waitFor(); // the tool's name
    await header
      .getByTestId('column-progress')
      .filter({ hasText: /^0\/30$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Column menu of Ratio' }).click();
    await page.getByRole('menuitem', { name: 'Run pending cells…' }).click();
    await page.getByRole('button', { name: 'Run 30 cells' }).click();
    await page.getByRole('status').filter({ hasText: '30 cells queued' }).waitFor();
    await page.keyboard.press('Escape');
    const id = await colId('Ratio');
    await settle(project);
    const progress = (await call('GET', `/projects/${project}/columns/progress`)).body.columns.find((c: any) => c.col_id === id);
    expect(progress.total).toBe(30);
    const failed = progress.error ?? 0;
    expect(failed).toBeGreaterThan(0);
    // Live: the bar says what the API says, without a reload.
    await header
      .getByTestId('column-progress')
      .filter({ hasText: new RegExp(`^30/30 · ${failed} failed$`) })
      .waitFor();
    // Re-run failed: the estimate counts exactly the failed cells.
    await page.getByRole('button', { name: 'Column menu of Ratio' }).click();
    await page.getByRole('menuitem', { name: 'Re-run failed cells…' }).click();
    await page
      .getByTestId('estimate')
      .filter({ hasText: new RegExp(`^${failed} cells? to run`) })
      .waitFor();
    await page.keyboard.press('Escape');
    // Edit config: the expression no longer fails; re-run failed fills them.
    await page.getByRole('button', { name: 'Column menu of Ratio' }).click();
    await page.getByRole('menuitem', { name: 'Edit column…' }).click();
    await page.getByLabel('Expression *').fill('$number(Employees) / 10');
    await page.getByRole('button', { name: 'Save column' }).click();
    await page.getByRole('status').filter({ hasText: 'Column Ratio saved' }).waitFor();
    expect((await columnsOf()).find((c) => c.name === 'Ratio').config).toEqual({ expression: '$number(Employees) / 10' });
    await page.getByRole('button', { name: 'Column menu of Ratio' }).click();
    await page.getByRole('menuitem', { name: 'Re-run failed cells…' }).click();
    await page.getByRole('button', { name: new RegExp(`^Run ${failed} cells?$`) }).click();
    await page.keyboard.press('Escape');
    await header
      .getByTestId('column-progress')
      .filter({ hasText: /^30\/30$/ })
      .waitFor();
    await accessible(page, 'a table with a tool column');
  });

  test('a record value shows its primary field; its detail extracts a field into a column of its own', async () => {
    await call('POST', `/projects/${project}/columns`, { name: 'Firm', tool_id: 'company_enrich', config: { domain: '{{Website}}' } });
    const firm = await colId('Firm');
    const first = (await call('GET', `/projects/${project}/rows?page_size=2`)).body.rows.map((r: any) => r.id);
    await call('POST', `/projects/${project}/columns/run`, { col_ids: [firm], row_ids: first });
    await settle(project);
    const row = (await call('GET', `/projects/${project}/rows/${first[0]}`)).body;
    const value = row.company.Firm.value;
    expect(typeof value).toBe('object');
    await open();
    const cell = page.locator(`.ag-row[row-index="0"] [col-id="${firm}"]`);
    await cell.filter({ hasText: String(value.industry) }).waitFor();
    expect(await cell.textContent()).toBe(String(value.industry)); // not the JSON
    await cell.click();
    const detail = page.getByRole('dialog', { name: /Cell detail/ });
    await detail
      .getByTestId('cell-primary')
      .filter({ hasText: `industry: ${value.industry}` })
      .waitFor();
    await detail.getByRole('button', { name: 'Extract employees to a column' }).click();
    await page.getByRole('columnheader', { name: /Firm employees/ }).waitFor();
    const extracted = await colId('Firm employees');
    await page.locator(`.ag-row[row-index="0"] [col-id="${extracted}"]`, { hasText: String(value.employees) }).waitFor();
  });

  test('input cells edit in place: Enter saves through the API, Escape cancels, a refused value comes back with the reason', async () => {
    await open();
    const name = await colId('Name');
    const ids = (await call('GET', `/projects/${project}/rows?page_size=5`)).body.rows.map((r: any) => r.id);
    const nameOf = async (i: number) => (await call('GET', `/projects/${project}/rows/${ids[i]}`)).body.company.Name.value;
    const cell = (i: number) => page.locator(`.ag-row[row-index="${i}"] [col-id="${name}"]`);
    await cell(2).click();
    await page.keyboard.press('Enter');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Acme Two');
    await page.keyboard.press('Enter');
    await cell(2)
      .filter({ hasText: /^Acme Two$/ })
      .waitFor();
    for (let i = 0; i < 100 && (await nameOf(2)) !== 'Acme Two'; i++) await Bun.sleep(25);
    expect(await nameOf(2)).toBe('Acme Two');
    // Escape leaves the value as it was.
    await cell(3).click();
    await page.keyboard.press('F2');
    await page.keyboard.type(' changed');
    await page.keyboard.press('Escape');
    await cell(3)
      .filter({ hasText: /^Acme 3$/ })
      .waitFor();
    expect(await nameOf(3)).toBe('Acme 3');
    // A unique key on Name: a value another row holds is refused; the cell shows its old value, the page says why.
    expect((await call('PUT', `/projects/${project}/settings`, { unique_columns: ['Name'] })).status).toBe(200);
    await cell(4).click();
    await page.keyboard.press('Enter');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Acme 5');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Row 5, Name: not saved.' }).waitFor();
    await cell(4)
      .filter({ hasText: /^Acme 4$/ })
      .waitFor();
    expect(await nameOf(4)).toBe('Acme 4');
    expect((await call('PUT', `/projects/${project}/settings`, { unique_columns: [] })).status).toBe(200);
  });

  test('the row detail lists every cell; selected rows run a column, export and delete', async () => {
    await open();
    await page.getByRole('button', { name: 'Open row 1', exact: true }).click();
    const detail = page.getByRole('dialog', { name: 'Row 1' });
    await detail.getByTestId('row-detail').waitFor();
    for (const c of await columnsOf()) await detail.locator('dt', { hasText: c.name }).first().waitFor();
    await detail.getByText('Acme 0', { exact: true }).waitFor();
    await accessible(page, 'row detail');
    await page.keyboard.press('Escape');
    // Select rows 1 and 3 with their boxes, then shift-click row 5: rows 3 to 5 join.
    const box = (i: number) => page.locator(`.ag-row[row-index="${i}"] input[type=checkbox]`);
    await box(0).click();
    await box(2).click();
    await box(4).click({ modifiers: ['Shift'] });
    await page.getByRole('region', { name: 'Selected rows' }).getByText('4 rows selected').waitFor();
    // Export them: the file holds those rows, as shown.
    const downloaded = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export them' }).click();
    const file = readFileSync((await (await downloaded).path()) as string, 'utf8');
    const lines = file.trim().split('\r\n');
    expect(lines[0]?.startsWith('Name,Website,Employees')).toBe(true);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['Acme 0', 'Acme Two', 'Acme 3', 'Acme 4']);
    // Run a column on them: the estimate is for these 4 rows.
    await page.getByRole('button', { name: 'Run a column on them…' }).click();
    const run = page.getByRole('dialog', { name: 'Run a column on the selected rows' });
    await run.getByLabel('Column', { exact: true }).selectOption({ label: 'Ratio' });
    await run
      .getByTestId('estimate')
      .filter({ hasText: /^4 cells to run/ })
      .waitFor();
    await page.keyboard.press('Escape');
    // Delete them, asked first.
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete them…' }).click();
    await page.getByRole('status').filter({ hasText: '4 rows deleted.' }).waitFor();
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^26 rows/ })
      .waitFor();
    expect((await call('GET', `/projects/${project}`)).body.row_count).toBe(26);
  });

  test('Export CSV writes the rows of the view; + Row adds one; the project is renamed, then deleted after asking', async () => {
    await page.goto(`${origin}/projects/${project}?q=${encodeURIComponent('acme 1')}`);
    await page
      .getByTestId('row-count')
      .filter({ hasText: / of 26 rows/ })
      .waitFor();
    const shown = Number((await page.getByTestId('row-count').textContent())?.split(' ')[0]);
    const downloaded = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = readFileSync((await (await downloaded).path()) as string, 'utf8');
    expect(file.trim().split('\r\n').length).toBe(shown + 1);
    // + Row
    await page.goto(`${origin}/projects/${project}`);
    await page.getByRole('button', { name: '+ Row' }).click();
    const add = page.getByRole('dialog', { name: 'Add a row' });
    await add.getByLabel('Name').fill('Newco');
    await add.getByLabel('Website').fill('https://newco.example.com');
    await add.getByRole('button', { name: 'Add row' }).click();
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^27 rows/ })
      .waitFor();
    await page.locator('.ag-cell', { hasText: /^Newco$/ }).waitFor();
    // Rename
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await page.getByRole('dialog', { name: 'Rename the project' }).getByLabel('Project name').fill('Renamed table');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { name: 'Renamed table' }).waitFor();
    expect((await call('GET', `/projects/${project}`)).body.name).toBe('Renamed table');
    // Delete, asked first.
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: 'Delete project' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(asked).toContain('Delete the project “Renamed table”? Its 27 rows');
    expect((await call('GET', `/projects/${project}`)).status).toBe(404);
  });

  test('a CSV file picked or dropped on the projects page becomes a project: upload progress, then its table', async () => {
    await page.goto(`${origin}/`);
    // A slow uplink (CDP), so the upload's progress bar is seen moving.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 40_000 });
    const big = `Name,City\n${Array.from({ length: 3000 }, (_, i) => `Person ${i},Somewhere ${i}`).join('\n')}\n`;
    await page.getByLabel('CSV file to import').setInputFiles({ name: 'Leads list.csv', mimeType: 'text/csv', buffer: Buffer.from(big) });
    await page.getByRole('progressbar', { name: 'Uploading Leads list.csv' }).waitFor();
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await page.getByRole('heading', { name: 'Leads list' }).waitFor({ timeout: 30_000 });
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^3,000 rows/ })
      .waitFor();
    // Dropped.
    await page.goto(`${origin}/`);
    const dropped = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File(['Name\nX\nY\nZ\n'], 'Dropped.csv', { type: 'text/csv' }));
      return d;
    });
    await page.getByRole('region', { name: 'Import a CSV file' }).dispatchEvent('drop', { dataTransfer: dropped });
    await page.getByRole('heading', { name: 'Dropped' }).waitFor();
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^3 rows/ })
      .waitFor();
    // Not a CSV: said, and nothing is made.
    await page.goto(`${origin}/`);
    const before = (await call('GET', '/projects')).body.total;
    await page
      .getByLabel('CSV file to import')
      .setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from([137, 80, 78, 71]) });
    await page.getByRole('alert').filter({ hasText: 'photo.png is not a CSV file' }).waitFor();
    expect((await call('GET', '/projects')).body.total).toBe(before);
    await accessible(page, 'projects with the import zone');
    // New project → CSV import: paste the rows, or send the file the same way; no upload id to copy.
    await page.goto(`${origin}/projects/new`);
    await page.getByRole('radio', { name: /CSV import/ }).check();
    await page.getByRole('region', { name: 'Import a CSV file' }).waitFor();
    expect(await page.getByLabel(/upload id/i).count()).toBe(0);
    await page.getByLabel(/CSV text/i).fill('Name\nPasted one\nPasted two');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page
      .getByTestId('row-count')
      .filter({ hasText: /^2 rows/ })
      .waitFor();
  });

  test("an LLM tool's output schema is set as the answer's fields (or as JSON), and the column answers in them", async () => {
    await openAny();
    await page.getByRole('button', { name: '+ Column' }).click();
    await page.getByLabel('Column name *').fill('Healthcare');
    await page.getByLabel('Tool', { exact: true }).selectOption('research_agent');
    await page.getByLabel('Question *').fill('Does {{Name}} ({{Website}}) sell to healthcare?');
    await page.getByLabel('Model *').fill('gpt-4o-mini');
    const fields = page.getByRole('group', { name: /Output schema/ });
    await fields.getByRole('button', { name: '+ Field' }).click();
    await fields.getByLabel('Name of field 1').fill('sells_to_healthcare');
    await fields.getByLabel('Kind of field 1').selectOption({ label: 'Yes / no' });
    await fields.getByLabel('Description of field 1').fill('Whether it sells to care providers');
    await fields.getByRole('button', { name: '+ Field' }).click();
    await fields.getByLabel('Name of field 2').fill('evidence');
    await fields.getByRole('button', { name: '+ Field' }).click();
    await fields.getByLabel('Name of field 3').fill('segments');
    await fields.getByLabel('Kind of field 3').selectOption({ label: 'List of texts' });
    await fields.getByLabel('Field 3 is required').uncheck();
    // A keyword the rows do not show, added as JSON, is kept.
    await fields.getByRole('button', { name: 'Edit as JSON' }).click();
    const json = fields.getByLabel('JSON Schema');
    await json.fill('{"type": "object", "properties": {');
    await fields.getByRole('button', { name: 'Use this schema' }).click();
    await fields.getByText(/^Not JSON/).waitFor();
    await json.fill(
      JSON.stringify({
        type: 'object',
        properties: {
          sells_to_healthcare: { type: 'boolean', description: 'Whether it sells to care providers' },
          evidence: { type: 'string' },
          segments: { type: 'array', items: { type: 'string', enum: ['hospitals', 'clinics', 'labs'] } },
        },
        required: ['sells_to_healthcare', 'evidence'],
        additionalProperties: false,
      }),
    );
    await fields.getByRole('button', { name: 'Use this schema' }).click();
    await fields.getByLabel('Name of field 3').waitFor();
    expect(await fields.getByLabel('Name of field 3').inputValue()).toBe('segments');
    await accessible(page, 'the output schema as fields');
    await page.getByRole('button', { name: 'Add column' }).click();
    await page.getByRole('columnheader', { name: /Healthcare/ }).waitFor();
    const column = (await columnsOf()).find((c) => c.name === 'Healthcare');
    expect(column.config.output_schema).toEqual({
      type: 'object',
      properties: {
        sells_to_healthcare: { type: 'boolean', description: 'Whether it sells to care providers' },
        evidence: { type: 'string' },
        segments: { type: 'array', items: { type: 'string', enum: ['hospitals', 'clinics', 'labs'] } },
      },
      required: ['sells_to_healthcare', 'evidence'],
      additionalProperties: false,
    });
    // Run on the first row (sandbox answers): the answer has the fields asked for.
    const first = (await call('GET', `/projects/${project}/rows?page=1&page_size=1`)).body.rows[0];
    await call('POST', `/projects/${project}/columns/run`, { col_ids: [column.col_id], row_ids: [first.id] });
    await settle(project);
    const row = (await call('GET', `/projects/${project}/rows/${first.id}`)).body;
    expect(Object.keys(row.company.Healthcare.value.answer).sort()).toEqual(expect.arrayContaining(['evidence', 'sells_to_healthcare']));
    expect(typeof row.company.Healthcare.value.answer.sells_to_healthcare).toBe('boolean');
  });

  test('a CRM sync column: its object chosen from a list, its field mapping entered as name and value rows', async () => {
    await openAny();
    await page.getByRole('button', { name: '+ Column' }).click();
    await page.getByLabel('Column name *').fill('HubSpot');
    await page.getByLabel('Tool', { exact: true }).selectOption('hubspot_sync');
    const object = page.getByLabel('Object *');
    expect(await object.evaluate((e) => e.tagName)).toBe('SELECT');
    await object.selectOption('companies');
    await page.getByLabel('Key *').fill('{{Website}}');
    const fields = page.getByRole('group', { name: 'Fields' });
    await fields.getByRole('button', { name: 'Add to Fields' }).click();
    await fields.getByLabel('Fields name 1').fill('name');
    await fields.getByLabel('Fields value 1').fill('{{Name}}');
    await fields.getByRole('button', { name: 'Add to Fields' }).click();
    await fields.getByLabel('Fields name 2').fill('numberofemployees');
    await fields.getByLabel('Fields value 2').fill('{{Employees}}');
    await fields.getByRole('button', { name: 'Add to Fields' }).click();
    await fields.getByRole('button', { name: 'Remove Fields 3' }).click();
    await accessible(page, 'a name → value mapping');
    await page.getByRole('button', { name: 'Add column' }).click();
    await page.getByRole('columnheader', { name: /HubSpot/ }).waitFor();
    const column = (await columnsOf()).find((c) => c.name === 'HubSpot');
    expect(column.config).toMatchObject({
      object: 'companies',
      key: '{{Website}}',
      fields: { name: '{{Name}}', numberofemployees: '{{Employees}}' },
    });
    expect(Object.keys(column.config.fields)).toHaveLength(2);
  });
});
