import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * The typical agent flow over MCP, measured in what the agent reads: the text of each tool result,
 * in bytes and in tokens (o200k_base, the tokenizer of current OpenAI models; other models' counts
 * differ by a few percent). Two ways of doing the same work on a 50-row Google Maps project (sandbox
 * data) with 3 tool columns of short values:
 * with this server's waits and `format: "values"`, and as agents had to before them — polling
 * get_project every 2 s until the builder run ended, and get_project_rows (cells) until every cell did.
 */

export interface FlowStep {
  call: string;
  bytes: number;
  tokens: number;
}

export interface Flow {
  steps: FlowStep[];
  bytes: number;
  tokens: number;
}

const POLL_MS = 2_000;

interface ToolColumn {
  name: string;
  tool_id: string;
  config: Record<string, unknown>;
}

/** Three columns of short values (a domain, a phone number, an LLM's classification): the flow the target is set for. */
export const SHORT_COLUMNS: ToolColumn[] = [
  { name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } },
  { name: 'Phone E.164', tool_id: 'phone_normalizer', config: { phone: '{{Phone}}', default_country: 'FR' } },
  {
    name: 'Segment',
    tool_id: 'ai_prompt',
    config: {
      prompt:
        'Classify {{Name}} ({{Category}}, {{Reviews}} reviews): a solo practice, a clinic or a chain? How well does it fit a dental-software offer, 0 to 100?',
      model: 'gpt-4o-mini',
      json_schema: {
        type: 'object',
        properties: { segment: { type: 'string', enum: ['solo', 'clinic', 'chain'] }, fit: { type: 'integer' } },
        required: ['segment', 'fit'],
        additionalProperties: false,
      },
    },
  },
];

/** Three columns of whole records (the website's and the company's): what the rows themselves weigh then. */
export const RECORD_COLUMNS: ToolColumn[] = [
  { name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } },
  { name: 'Site', tool_id: 'website_info', config: { url: '{{Website}}' } },
  { name: 'Company', tool_id: 'company_enrich', config: { domain: '{{Website}}' } },
];

let rpcId = 0;

/** One JSON-RPC request to the MCP endpoint with a key, as a plain client sends it (no SDK: the figures are the server's). */
export function rpcPost(mcpUrl: string, key: string, method: string, params?: unknown): Promise<Response> {
  return post(mcpUrl, key, { 'mcp-protocol-version': '2025-06-18' }, { method, ...(params === undefined ? {} : { params }) });
}

function post(mcpUrl: string, key: string, headers: Record<string, string>, message: { method: string; params?: unknown }) {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'service-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, ...message }),
  });
}

/**
 * The same request in the 2026-07-28 era: no session, the version and the client's identity in the
 * request's `_meta`, and the `Mcp-Method` / `Mcp-Name` headers the server checks against the body.
 */
export function modernRpcPost(mcpUrl: string, key: string, method: string, params: Record<string, unknown> & { name?: string }) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(params.name ? { 'mcp-name': params.name } : {}) };
  return post(mcpUrl, key, headers, { method, params: { ...params, _meta: meta } });
}

export function flowClient(mcpUrl: string, key: string) {
  return async (name: string, args: Record<string, unknown> = {}): Promise<{ text: string; envelope: any }> => {
    const r = await rpcPost(mcpUrl, key, 'tools/call', { name, arguments: args });
    const body = (await r.json()) as { result?: { content: { text: string }[] } };
    const text = body.result?.content[0]?.text;
    if (text === undefined) throw new Error(`${name} failed: ${JSON.stringify(body).slice(0, 300)}`);
    const envelope = JSON.parse(text);
    if (!envelope.ok) throw new Error(`${name} answered ${text.slice(0, 300)}`);
    return { text, envelope };
  };
}

type Call = ReturnType<typeof flowClient>;

function recorder() {
  const steps: FlowStep[] = [];
  return {
    steps,
    add(call: string, text: string) {
      steps.push({ call, bytes: Buffer.byteLength(text), tokens: countTokens(text) });
    },
    total(): Flow {
      return { steps, bytes: steps.reduce((s, x) => s + x.bytes, 0), tokens: steps.reduce((s, x) => s + x.tokens, 0) };
    },
  };
}

const FORM = JSON.stringify({ query: 'dentists in Lyon', max_results: 50 });

/** list_builders → run_builder(wait) → create_column ×3 → run_pending_columns(wait) → get_project_rows(values). */
export async function flowWithWaits(call: Call, columns: ToolColumn[] = SHORT_COLUMNS): Promise<Flow> {
  const r = recorder();
  r.add('list_builders', (await call('list_builders')).text);
  const built = await call('run_builder', { builder_id: 'google_maps_search', form_data_json: FORM, wait_seconds: 50 });
  r.add('run_builder (wait_seconds 50)', built.text);
  const project = built.envelope.data.project_id;
  for (const c of columns) {
    r.add(
      `create_column ${c.tool_id}`,
      (await call('create_column', { project_id: project, name: c.name, tool_id: c.tool_id, config_json: JSON.stringify(c.config) })).text,
    );
  }
  r.add('run_pending_columns (wait_seconds 50)', (await call('run_pending_columns', { project_id: project, wait_seconds: 50 })).text);
  r.add(
    'get_project_rows (format values, 50 rows)',
    (await call('get_project_rows', { project_id: project, page_size: 50, format: 'values' })).text,
  );
  return r.total();
}

/** The same work as agents did it before: polls instead of waits, cells instead of values. */
export async function flowPolling(call: Call, columns: ToolColumn[] = SHORT_COLUMNS): Promise<Flow> {
  const r = recorder();
  r.add('list_builders', (await call('list_builders')).text);
  const built = await call('run_builder', { builder_id: 'google_maps_search', form_data_json: FORM });
  r.add('run_builder', built.text);
  const project = built.envelope.data.project_id;
  let polls = 0;
  let pollBytes = '';
  for (;;) {
    await Bun.sleep(POLL_MS);
    const p = await call('get_project', { project_id: project });
    polls++;
    pollBytes += p.text;
    if (!['queued', 'running'].includes(p.envelope.data.builder_status.type)) break;
  }
  r.add(`get_project ×${polls} (polled every ${POLL_MS / 1000} s)`, pollBytes);
  for (const c of columns) {
    r.add(
      `create_column ${c.tool_id}`,
      (await call('create_column', { project_id: project, name: c.name, tool_id: c.tool_id, config_json: JSON.stringify(c.config) })).text,
    );
  }
  r.add('run_pending_columns', (await call('run_pending_columns', { project_id: project })).text);
  polls = 0;
  pollBytes = '';
  for (;;) {
    await Bun.sleep(POLL_MS);
    const rows = await call('get_project_rows', { project_id: project, page_size: 50 });
    polls++;
    pollBytes += rows.text;
    const working = rows.envelope.data.rows.some((row: any) => Object.values(row.company).some((cell: any) => cell.is_loading));
    if (!working) break;
  }
  r.add(`get_project_rows (cells, 50 rows) ×${polls} (polled every ${POLL_MS / 1000} s)`, pollBytes);
  return r.total();
}

/** tools/list as a client reads it once per connection. */
export async function toolsListSize(mcpUrl: string, key: string): Promise<FlowStep> {
  const r = await rpcPost(mcpUrl, key, 'tools/list');
  const text = JSON.stringify(((await r.json()) as { result: unknown }).result);
  return { call: 'tools/list', bytes: Buffer.byteLength(text), tokens: countTokens(text) };
}

export function flowTable(withWaits: Flow, polling: Flow, tools: FlowStep): string {
  const row = (s: FlowStep) => `| ${s.call} | ${s.bytes.toLocaleString('en')} | ${s.tokens.toLocaleString('en')} |`;
  return [
    'Typical flow, 50 rows and 3 tool columns (what the agent reads: the text of each result; tokens: o200k_base):',
    '',
    '| with waits and format "values" | bytes | tokens |',
    '| --- | ---: | ---: |',
    ...withWaits.steps.map(row),
    `| **whole flow** | **${withWaits.bytes.toLocaleString('en')}** | **${withWaits.tokens.toLocaleString('en')}** |`,
    '',
    '| polling and cells, as before | bytes | tokens |',
    '| --- | ---: | ---: |',
    ...polling.steps.map(row),
    `| **whole flow** | **${polling.bytes.toLocaleString('en')}** | **${polling.tokens.toLocaleString('en')}** |`,
    '',
    `tools/list, read once per connection: ${tools.bytes.toLocaleString('en')} bytes, ${tools.tokens.toLocaleString('en')} tokens.`,
  ].join('\n');
}
