import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../support/test-service.ts';
import { accessible, restCall, startConsole, stopConsole } from './console-support.ts';

/**
 * A project's settings page in Debian's Chromium (as console-browser.test.ts): a person sets the
 * unique key (input columns only; rows that already repeat it are the service's 409, shown with its
 * examples), starts a schedule from a preset (a bad cron, a bad time zone and a project without a
 * key show the service's 422 where they were typed), sees its next run, stops it, and makes and
 * turns off an inbound URL (shown once). axe-core checks the page.
 */

/** Two spellings of one web address (one key), and a third company. */
const CSV = 'Name,Website\nAcme,ACME.com\nAcme SAS,https://www.acme.com/\nGlobex,globex.com';

describe('project settings in Chromium', () => {
  let browser: Browser;
  let t: TestService;
  let origin: string;
  let page: Page;
  /** A key of the owner's workspace (`default`), the one the console signs in to. */
  let ownerKey: string;
  let projectId: string;

  beforeAll(async () => {
    ({ t, origin, ownerKey, browser, page } = await startConsole());

    const made = await rest('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: CSV }, name: 'Leads' });
    projectId = made.body.project_id;
    expect((await rest('GET', `/projects/${projectId}/wait?wait_seconds=20`)).body.ended).toBe(true);
    // A tool column: never offered as a key column.
    expect(
      (
        await rest('POST', `/projects/${projectId}/columns`, {
          name: 'Upper',
          tool_id: 'formula',
          config: { expression: '$uppercase(Name)' },
        })
      ).status,
    ).toBe(201);
  }, 60_000);
  afterAll(() => stopConsole({ browser, t }));

  const rest = (method: string, path: string, body?: unknown) => restCall(t.url, ownerKey, method, path, body);

  const alert = (section: string) => page.getByRole('region', { name: section, exact: true }).getByRole('alert');
  const status = (section: string) => page.getByRole('region', { name: section, exact: true }).getByRole('status');

  test('from the table to its settings: the unique key takes input columns only, and rows that repeat it are shown, nothing set', async () => {
    await page.goto(`${origin}/projects/${projectId}`);
    await page.getByRole('link', { name: 'Project settings' }).click();
    await page.getByRole('heading', { name: 'Leads · Settings' }).waitFor();
    await accessible(page, 'project settings page');
    const key = page.getByRole('group', { name: 'Unique columns' });
    expect(await key.getByRole('checkbox').count()).toBe(2);
    expect(await key.getByRole('checkbox', { name: 'Upper' }).count()).toBe(0);

    // Website: ACME.com and https://www.acme.com/ are one key, so the service refuses (409) and the page says which rows.
    const refused = await rest('PUT', `/projects/${projectId}/settings`, { unique_columns: ['Website'] });
    expect(refused.status).toBe(409);
    await key.getByRole('checkbox', { name: 'Website' }).check();
    await page.getByRole('button', { name: 'Save unique key' }).click();
    const duplicates = page.getByTestId('duplicates');
    await duplicates.waitFor();
    expect(await duplicates.getAttribute('role')).toBe('alert');
    expect(await duplicates.textContent()).toContain('1 row repeats the key of an earlier row, so the key was not set');
    const [example] = refused.body.detail.examples;
    expect(await duplicates.getByRole('listitem').textContent()).toBe(
      `Rows ${example.row_ids.join(' and ')}: Website “${example.values.Website}”`,
    );
    await accessible(page, 'unique key refused');
    expect((await rest('GET', `/projects/${projectId}`)).body.settings).toEqual({ unique_columns: [], on_conflict: 'skip' });

    // Name instead, filling the existing row's empty cells: saved, and shown again after a reload.
    await key.getByRole('checkbox', { name: 'Website' }).uncheck();
    await key.getByRole('checkbox', { name: 'Name' }).check();
    await page.getByRole('radio', { name: /^Fill the existing row's empty cells/ }).check();
    await page.getByRole('button', { name: 'Save unique key' }).click();
    await status('Unique key').filter({ hasText: 'Saved: rows are identified by Name' }).waitFor();
    expect(await duplicates.count()).toBe(0);
    expect((await rest('GET', `/projects/${projectId}`)).body.settings).toEqual({ unique_columns: ['Name'], on_conflict: 'update' });
    await page.reload();
    expect(await key.getByRole('checkbox', { name: 'Name' }).isChecked()).toBe(true);
    expect(await key.getByRole('checkbox', { name: 'Website' }).isChecked()).toBe(false);
    expect(await page.getByRole('radio', { name: /^Fill the existing row's empty cells/ }).isChecked()).toBe(true);
    // The key holds: Acme again is the existing row.
    const again = await rest('POST', `/projects/${projectId}/rows`, { company: { Name: ' ACME ', Website: 'acme.org' } });
    expect(again.body).toMatchObject({ message: 'Row already exists' });
    // The table says which key the project has.
    await page.getByRole('link', { name: '← Back to the table' }).click();
    await page.locator('p.meta', { hasText: 'unique key: Name' }).waitFor();
  });

  test('a schedule: no key is the service’s 422, a bad cron and a bad time zone too; a preset starts it, its next run shows, Stop ends it', async () => {
    const bare = await rest('POST', '/projects', {
      builder_id: 'csv_import_builder',
      form_data: { csv_text: 'Name\nInitech' },
      name: 'Bare',
    });
    const bareId = bare.body.project_id;
    await rest('GET', `/projects/${bareId}/wait?wait_seconds=20`);
    await page.goto(`${origin}/projects/${bareId}/settings`);
    const schedule = page.getByRole('region', { name: 'Schedule', exact: true });
    await schedule.getByTestId('schedule-state').filter({ hasText: 'No schedule' }).waitFor();
    await schedule.getByRole('button', { name: 'Start schedule' }).click();
    const noKey = await rest('PUT', `/projects/${bareId}/schedule`, { cron: '0 7 * * 1-5', timezone: 'UTC' });
    expect(noKey.status).toBe(422);
    expect(noKey.body.detail.message).toContain('Set the project’s unique_columns first (PUT /projects/{project_id}/settings)');
    // The page says it in its own words: no route, no API field name.
    await alert('Schedule')
      .filter({ hasText: 'Set the project’s unique key first: a scheduled run adds only rows whose key is new' })
      .waitFor();
    expect((await rest('GET', `/projects/${bareId}/schedule`)).status).toBe(404);

    await page.goto(`${origin}/projects/${projectId}/settings`);
    await schedule.getByTestId('schedule-state').filter({ hasText: 'No schedule' }).waitFor();
    const cron = schedule.getByLabel('Cron pattern');
    const zone = schedule.getByLabel('Time zone');
    // A cron croner cannot read: the message, on the field too; nothing saved.
    await cron.fill('every day');
    await zone.fill('Europe/Paris');
    await schedule.getByRole('button', { name: 'Start schedule' }).click();
    await alert('Schedule').filter({ hasText: 'Invalid cron "every day"' }).waitFor();
    expect(await cron.getAttribute('aria-invalid')).toBe('true');
    expect(await schedule.getByLabel('When').inputValue()).toBe(''); // "Other"
    await accessible(page, 'schedule with a bad cron');
    expect((await rest('GET', `/projects/${projectId}/schedule`)).status).toBe(404);

    // A preset fills the pattern; saved, the schedule shows when it runs next (what the API says).
    await schedule.getByLabel('When').selectOption({ label: 'Weekdays at 7:00' });
    expect(await cron.inputValue()).toBe('0 7 * * 1-5');
    await schedule.getByRole('button', { name: 'Start schedule' }).click();
    await status('Schedule').filter({ hasText: 'Schedule saved.' }).waitFor();
    expect(await cron.getAttribute('aria-invalid')).toBe('false');
    const saved = await rest('GET', `/projects/${projectId}/schedule`);
    expect(saved.body).toMatchObject({ cron: '0 7 * * 1-5', timezone: 'Europe/Paris', last_run_at: null, last_outcome: null });
    expect(await schedule.getByTestId('next-run').getAttribute('datetime')).toBe(saved.body.next_run_at);
    expect(await schedule.getByTestId('schedule-state').textContent()).toContain('Weekdays at 7:00');
    expect(await schedule.getByTestId('last-outcome').textContent()).toBe('—');
    await accessible(page, 'schedule set');

    // Read again after a reload: the form holds the schedule, and Save changes it.
    await page.reload();
    await schedule.getByTestId('next-run').waitFor();
    expect(await cron.inputValue()).toBe('0 7 * * 1-5');
    expect(await zone.inputValue()).toBe('Europe/Paris');
    await zone.fill('Mars/Olympus_Mons');
    await schedule.getByRole('button', { name: 'Save schedule' }).click();
    await alert('Schedule').filter({ hasText: 'Unknown timezone "Mars/Olympus_Mons"' }).waitFor();
    expect(await zone.getAttribute('aria-invalid')).toBe('true');
    expect((await rest('GET', `/projects/${projectId}/schedule`)).body.timezone).toBe('Europe/Paris');
    await zone.fill('UTC');
    await schedule.getByLabel('When').selectOption({ label: 'Every Monday at 7:00' });
    await schedule.getByRole('button', { name: 'Save schedule' }).click();
    await status('Schedule').filter({ hasText: 'Schedule saved.' }).waitFor();
    const monday = await rest('GET', `/projects/${projectId}/schedule`);
    expect(monday.body).toMatchObject({ cron: '0 7 * * 1', timezone: 'UTC' });
    expect(new Date(monday.body.next_run_at).getUTCDay()).toBe(1);
    await schedule.locator(`[data-testid="next-run"][datetime="${monday.body.next_run_at}"]`).waitFor();

    // Stop.
    await schedule.getByRole('button', { name: 'Stop schedule' }).click();
    await status('Schedule').filter({ hasText: 'Schedule stopped' }).waitFor();
    await schedule.getByTestId('schedule-state').filter({ hasText: 'No schedule' }).waitFor();
    expect((await rest('GET', `/projects/${projectId}/schedule`)).status).toBe(404);
  });

  test('a project made without a builder has nothing to schedule', async () => {
    const storage = t.service.kernel.storage;
    const workspace = (await storage.workspaces.findByName('default'))?.id as string;
    const project = await storage.projects.create({
      workspaceId: workspace,
      creatorId: 'test',
      name: 'Hand made',
      builderId: null,
      formData: null,
      columns: [{ name: 'Name', type: 'input' }],
    });
    await page.goto(`${origin}/projects/${project.id}/settings`);
    await page.getByText('This project was not made by a builder').waitFor();
    expect(await page.getByRole('button', { name: 'Start schedule' }).count()).toBe(0);
  });

  test('an inbound URL: made and shown once (copy), it adds rows; turned off, it answers 404', async () => {
    await page.goto(`${origin}/projects/${projectId}/settings`);
    const inbound = page.getByRole('region', { name: 'Inbound URL', exact: true });
    await inbound.getByRole('button', { name: 'Make an inbound URL' }).click();
    const url = (await inbound.getByTestId('inbound-url').textContent()) as string;
    expect(url).toContain(`/inbound/in_`);
    await inbound.getByRole('button', { name: 'Copy URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await accessible(page, 'inbound URL shown');
    const post = (body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const added = await post([{ Name: 'Umbrella', Website: 'umbrella.example' }]);
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ created: 1, existing: 0 });
    // Shown once: not after a reload.
    await page.reload();
    await inbound.getByRole('button', { name: 'Make an inbound URL' }).waitFor();
    expect(await page.getByTestId('inbound-url').count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(url);
    await inbound.getByRole('button', { name: 'Turn the inbound URL off' }).click();
    await status('Inbound URL').filter({ hasText: 'The inbound URL is off' }).waitFor();
    expect((await post({ Name: 'Too late' })).status).toBe(404);
    await inbound.getByRole('button', { name: 'Turn the inbound URL off' }).click();
    await status('Inbound URL').filter({ hasText: 'This project had no inbound URL.' }).waitFor();
  });
});
