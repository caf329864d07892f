/**
 * The project table as an MCP App (`io.modelcontextprotocol/ui`): rendered by the host (Claude,
 * ChatGPT, VS Code…) in a sandboxed iframe beside the tool result that named it. It reads the
 * project from that result, shows its rows with each cell's state, refreshes while cells work, and
 * acts through the host — every read and write is a call of the server's own tools.
 */
import { App } from '@modelcontextprotocol/ext-apps';

interface Envelope {
  ok: boolean;
  data?: Record<string, unknown>;
  detail?: { message?: string };
}
interface Cell {
  name: string;
  value: unknown;
  status?: string;
  error?: string | null;
}
interface Row {
  id: string;
  company: Record<string, Cell>;
}

const PAGE_SIZE = 25;
const REFRESH_MS = 1_500;

const app = new App({ name: 'workflow-service-table', version: '1.0.0' }, {});
const state = {
  projectId: '',
  page: 1,
  filter: undefined as { column: string; value: string } | undefined,
  refresh: undefined as ReturnType<typeof setTimeout> | undefined,
};
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** A tool's envelope (the text of its one content block). */
async function call(name: string, args: Record<string, unknown>): Promise<Envelope> {
  const result = await app.callServerTool({ name, arguments: args });
  const text = (result.content?.[0] as { text?: string } | undefined)?.text ?? '{}';
  return JSON.parse(text) as Envelope;
}

function say(message: string, isError = false): void {
  const el = $('message');
  el.textContent = message;
  el.className = isError ? 'message error' : 'message';
}

/** The project a tool result names (run_builder's new project, or the one read). */
function projectOf(envelope: Envelope | undefined, args: Record<string, unknown> | undefined): string | undefined {
  const data = envelope?.data as { project_id?: string; id?: string } | undefined;
  return data?.project_id ?? (args?.project_id as string | undefined) ?? data?.id;
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const first = ['email', 'url', 'domain', 'name', 'value'].find((k) => typeof record[k] === 'string' || typeof record[k] === 'number');
    return first ? String(record[first]) : JSON.stringify(value);
  }
  return String(value);
}

function cellElement(cell: Cell | undefined): HTMLTableCellElement {
  const td = document.createElement('td');
  const status = cell?.status ?? 'completed';
  if (status === 'queued' || status === 'running') {
    td.className = `working ${status}`;
    td.textContent = status === 'running' ? 'running…' : 'queued';
  } else if (status === 'error') {
    td.className = 'failed';
    td.textContent = cell?.error ?? 'error';
  } else {
    td.textContent = shown(cell?.value);
    if (status === 'pending') td.className = 'pending';
  }
  td.title = td.textContent ?? '';
  return td;
}

async function load(): Promise<void> {
  clearTimeout(state.refresh);
  if (!state.projectId) return;
  const args: Record<string, unknown> = { project_id: state.projectId, page: state.page, page_size: PAGE_SIZE };
  if (state.filter) {
    args.filter_groups_json = JSON.stringify([
      { type: 'and', rules: [{ col_id: state.filter.column, operator: 'contains', value: state.filter.value }] },
    ]);
  }
  const [project, rows] = await Promise.all([call('get_project', { project_id: state.projectId }), call('get_project_rows', args)]);
  if (!project.ok || !rows.ok) {
    say((project.ok ? rows : project).detail?.message ?? 'The project could not be read', true);
    return;
  }
  render(project.data as Record<string, unknown>, rows.data as { rows: Row[]; total_rows: number });
}

function render(project: Record<string, unknown>, page: { rows: Row[]; total_rows: number }): void {
  const columns = (project.columns as { col_id: string; name: string; type: string }[] | undefined) ?? [];
  $('title').textContent = String(project.name ?? 'Project');
  const first = (state.page - 1) * PAGE_SIZE;
  $('count').textContent = page.total_rows
    ? `rows ${first + 1}–${Math.min(first + page.rows.length, page.total_rows)} of ${page.total_rows}${state.filter ? ' (filtered)' : ''}`
    : 'no rows';
  const select = $<HTMLSelectElement>('filter-column');
  if (select.options.length !== columns.length) {
    select.replaceChildren(...columns.map((c) => new Option(c.name, c.col_id)));
  }
  const head = document.createElement('tr');
  for (const c of columns) {
    const th = document.createElement('th');
    th.textContent = c.name;
    if (c.type === 'tool') th.className = 'tool';
    head.append(th);
  }
  let working = 0;
  const body = page.rows.map((row) => {
    const tr = document.createElement('tr');
    for (const c of columns) {
      const cell = row.company[c.name];
      if (cell?.status === 'queued' || cell?.status === 'running') working++;
      tr.append(cellElement(cell));
    }
    return tr;
  });
  $('table').replaceChildren(head, ...body);
  $<HTMLButtonElement>('next').disabled = first + page.rows.length >= page.total_rows;
  $<HTMLButtonElement>('previous').disabled = state.page <= 1;
  // While cells work, the page is read again: a cell a worker fills shows without a reload.
  if (working > 0 || ['queued', 'running'].includes(String((project.builder_status as { type?: string })?.type))) {
    state.refresh = setTimeout(() => void load(), REFRESH_MS);
  }
}

/** Runs the project's pending cells, after showing what they would cost. */
async function runPending(): Promise<void> {
  const estimate = await call('estimate_columns', { project_id: state.projectId });
  if (!estimate.ok) return say(estimate.detail?.message ?? 'The estimate failed', true);
  const e = estimate.data as { cells?: number; credits_expected?: number; credits_max?: number; balance?: number };
  const confirmBox = $('confirm');
  $('confirm-text').textContent =
    `Run ${e.cells ?? 0} pending cells? About ${Math.round(e.credits_expected ?? 0)} credits (at most ${e.credits_max ?? 0}); balance ${e.balance ?? '?'}.`;
  confirmBox.hidden = false;
}

async function confirmRun(): Promise<void> {
  $('confirm').hidden = true;
  const run = await call('run_pending_columns', { project_id: state.projectId });
  if (!run.ok) return say(run.detail?.message ?? 'The run failed', true);
  say(`${(run.data as { queued?: number }).queued ?? 0} cells queued`);
  await load();
}

function bind(): void {
  $('run').onclick = () => void runPending();
  $('confirm-yes').onclick = () => void confirmRun();
  $('confirm-no').onclick = () => {
    $('confirm').hidden = true;
  };
  $('next').onclick = () => {
    state.page++;
    void load();
  };
  $('previous').onclick = () => {
    state.page = Math.max(1, state.page - 1);
    void load();
  };
  // No <form>: hosts sandbox the app without allow-forms, where a form never submits.
  const applyFilter = () => {
    const value = $<HTMLInputElement>('filter-value').value.trim();
    state.filter = value ? { column: $<HTMLSelectElement>('filter-column').value, value } : undefined;
    state.page = 1;
    void load();
  };
  $('filter-apply').onclick = applyFilter;
  $('filter-value').onkeydown = (event) => {
    if (event.key === 'Enter') applyFilter();
  };
}

/** The host's theme, else the system's (the palette is in table-app.css under [data-theme=dark]). */
function applyTheme(theme: string | undefined): void {
  const system = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  document.documentElement.dataset.theme = theme === 'dark' || theme === 'light' ? theme : system;
}

let lastArgs: Record<string, unknown> | undefined;
app.ontoolinput = (params) => {
  lastArgs = params.arguments as Record<string, unknown> | undefined;
};
app.ontoolresult = (params) => {
  const text = (params.content?.[0] as { text?: string } | undefined)?.text;
  const envelope = text ? (JSON.parse(text) as Envelope) : undefined;
  const id = projectOf(envelope, lastArgs);
  if (!id) return say('This result names no project', true);
  state.projectId = id;
  void load();
};
app.onhostcontextchanged = (context) => applyTheme((context as { theme?: string }).theme);

bind();
await app.connect();
applyTheme((app.getHostContext() as { theme?: string } | undefined)?.theme);
