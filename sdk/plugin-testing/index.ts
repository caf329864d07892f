/**
 * `workflow-service/plugin-testing`: runs a plugin's builder or tool in a test as the host would,
 * with no server, database or queue. The plugin gets the context the host gives it: the provider
 * mode, only the environment variables it declares, a signal, and (tools) the real expression
 * sandbox. Inputs are checked against the plugin's schema first, as the REST and MCP doors do.
 *
 * ```ts
 * import { runTool } from 'workflow-service/plugin-testing';
 * import plugin from './index.ts';
 *
 * test('upper-cases the name', async () => {
 *   expect(await runTool(plugin, [{ Name: 'acme' }], { text: '{{Name}}' })).toEqual([{ status: 'ok', value: 'ACME' }]);
 * });
 * ```
 */
import type { Static, TObject } from '@sinclair/typebox';
import { loadConfig } from '../../core/config.ts';
import { type ExpressionPool, openExpressionPool } from '../../core/expressions/expression-pool.ts';
import { assertBuilder, assertTool } from '../../core/plugins/definition-checks.ts';
import { declaredEnv } from '../../core/plugins/plugin-context.ts';
import type {
  AnyTool,
  BuilderPlugin,
  BuilderRunContext,
  BuiltRow,
  EnrichResult,
  PluginContext,
  ProviderNeeds,
  ToolContext,
  ToolItem,
  ToolPlugin,
  UploadHead,
} from '../../core/plugins/plugin-types.ts';
import { isFound } from '../../core/handlers/enrichment/classify-results.ts';
import { renderedConfig } from '../../core/handlers/enrichment/prepare-step.ts';
import { runTool as runHostTool } from '../../core/handlers/enrichment/run-tool.ts';
import { schemaErrors } from '../../core/schema/validate.ts';
import { refundOf, stepPrice } from '../../core/plugins/tool-price.ts';

export { PluginDefinitionError, assertBuilder, assertTool } from '../../core/plugins/definition-checks.ts';

/** How to run a plugin in a test. */
export interface RunOptions {
  /** `sandbox` (the default here: no network) or `live`. */
  providerMode?: 'live' | 'sandbox';
  /**
   * Where `ctx.env` reads from (default: `process.env` at call time). As in the host, the plugin is
   * answered only for the names it declares in `provider.requiredEnv` / `optionalEnv`.
   */
  env?: Record<string, string | undefined>;
  /** Passed to the plugin as `ctx.signal` (default: never aborted). */
  signal?: AbortSignal;
  /** Receives the plugin's `ctx.log` lines (default: dropped). */
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

export interface BuilderRunOptions extends RunOptions {
  /** `ctx.resume`: the cursor of the last page written, as when the host takes over a crashed run. */
  resume?: { cursor: unknown };
  /** Rows to collect at most (default: the builder's `maxRows`, where the host stops too). */
  maxRows?: number;
  /** `ctx.pageRows` (default 100). */
  pageRows?: number;
  /** An uploaded file, as `ctx.upload` hands it (`text` in parts of `partChars`, default 64 KiB). */
  upload?: { name: string; text: string; partChars?: number };
}

/** The upload's start, as the host hands it to columns/target/projectName. */
export function uploadHead(upload: { name: string; text: string }): UploadHead {
  return { name: upload.name, bytes: Buffer.byteLength(upload.text), head: upload.text.slice(0, UPLOAD_HEAD_CHARS) };
}

/** Characters of an upload's start the host keeps for columns/target (core/services/uploads.ts). */
const UPLOAD_HEAD_CHARS = 65_536;

/** What the host makes of one row: the tool's result, or `skipped` when a required input is empty. */
export type ToolOutcome = EnrichResult | { status: 'skipped'; reason: string };

const defaults = loadConfig({});
let pool: ExpressionPool | undefined;

/** The expression sandbox with the host's default bounds, opened on first use (its threads never hold the process open). */
function expressions(): ExpressionPool {
  pool ??= openExpressionPool(defaults);
  return pool;
}

function baseContext(plugin: { provider?: ProviderNeeds }, options: RunOptions): PluginContext {
  return {
    providerMode: options.providerMode ?? 'sandbox',
    env: declaredEnv(plugin, options.env),
    signal: options.signal ?? new AbortController().signal,
    log: options.log ?? (() => {}),
  };
}

/** The context the host would give this tool: for calling `tool.enrich` yourself. */
export function testToolContext<S extends TObject>(tool: ToolPlugin<S>, options: RunOptions = {}): ToolContext {
  return { ...baseContext(tool, options), expressions: expressions() };
}

/** The context the host would give this builder's `run`. */
export function testBuilderContext<S extends TObject>(builder: BuilderPlugin<S>, options: BuilderRunOptions = {}): BuilderRunContext {
  const upload = options.upload;
  const part = upload?.partChars ?? 65_536;
  return {
    ...baseContext(builder, options),
    pageRows: options.pageRows ?? 100,
    ...(options.resume ? { resume: options.resume } : {}),
    ...(upload
      ? {
          upload: {
            ...uploadHead(upload),
            async *text() {
              // As the host cuts them: never inside a surrogate pair.
              for (let i = 0; i < upload.text.length; ) {
                let end = Math.min(upload.text.length, i + part);
                const last = upload.text.charCodeAt(end - 1);
                if (end < upload.text.length && last >= 0xd800 && last <= 0xdbff) end++;
                yield upload.text.slice(i, end);
                i = end;
              }
            },
          },
        }
      : {}),
  };
}

/** Refuses inputs the host would refuse with a 422, naming each field. */
function refuse(what: string, problems: { path: string; message: string }[]): void {
  if (problems.length) throw new Error(`${what} refused: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`);
}

/** Tests call the provider stand-in as fast as it answers: no deployment-wide budget to share. */
const NO_BUDGET = { rateLimiter: { acquire: async () => {}, pause: async () => {} }, config: { limits: defaults.limits } };

/**
 * Runs a tool over rows (column name → value) with one column `config`, through the host's own
 * steps (core/handlers/enrichment/): the config is checked (schema, then `checkConfig`), its
 * `{{Column}}` templates are rendered over each row, a row missing a `requires` input is `skipped`,
 * the rest run as the host runs them — `enrich` in batches of `batchSize` (a batch that throws
 * gives each of its rows `{status: 'error', error, retryable}`, with its `retryAfterMs` when it has one), or `enrichOne` with the host's
 * concurrency (a thrown error stops the rows not yet started). A found value that `isValid` refuses
 * is `no_result`; one too large for a cell is an error. Answers one outcome per row, in order.
 */
export async function runTool<S extends TObject>(
  tool: ToolPlugin<S>,
  rows: Record<string, unknown>[],
  config: Static<S>,
  options: RunOptions = {},
): Promise<ToolOutcome[]> {
  assertTool(tool, `tool ${String((tool as { id?: unknown }).id)}`);
  const problems = schemaErrors(tool.input, config, 'config');
  refuse(
    `${tool.id} config`,
    problems.length ? problems : (tool.checkConfig?.(config) ?? []).map((p) => ({ ...p, path: `config.${p.path}` })),
  );
  const ctx = testToolContext(tool, options);
  const out: ToolOutcome[] = new Array(rows.length);
  const ready: { index: number; item: ToolItem<Record<string, unknown>> }[] = [];
  rows.forEach((row, index) => {
    const { config: rendered, missing } = renderedConfig(tool, config as Record<string, unknown>, row);
    if (missing.length) out[index] = { status: 'skipped', reason: `missing input: ${missing.join(', ')}` };
    else ready.push({ index, item: { rowId: String(index + 1), config: rendered, row } });
  });
  const results = await runHostTool(
    NO_BUDGET,
    tool as unknown as AnyTool,
    ready.map((r) => r.item),
    ctx,
  );
  ready.forEach((r, j) => {
    const result = results[j] as EnrichResult;
    out[r.index] = result.status === 'ok' && !isFound(tool as unknown as AnyTool, result) ? { status: 'no_result' } : result;
  });
  return out;
}

/**
 * What the host charges one row of this tool under the column `config` (as written, before
 * templates): `reserved`, taken before the row runs (every unit of a tool priced per unit, SDK 1.3),
 * and `charged`, what stays taken once the row's outcome is settled (refunds of a per-result tool
 * that found nothing, of units not used). A retryable error keeps its charge for the retry.
 */
export function rowCredits<S extends TObject>(
  tool: ToolPlugin<S>,
  config: Static<S>,
  outcome: ToolOutcome,
): { reserved: number; charged: number } {
  if (outcome.status === 'skipped') return { reserved: 0, charged: 0 };
  const t = tool as unknown as AnyTool;
  const c = config as Record<string, unknown>;
  const reserved = stepPrice(t, c);
  if (outcome.status === 'error' && outcome.retryable) return { reserved, charged: reserved };
  return { reserved, charged: reserved - refundOf(t, c, outcome, isFound(t, outcome)) };
}

/**
 * Runs a builder over a form as the host runs it: the form is checked against the schema, then
 * `columns(form)` (which may refuse it, as csv_import_builder does a CSV without header), then
 * every page `run` yields is collected, up to `maxRows`. Answers the rows.
 */
export async function runBuilder<S extends TObject>(
  builder: BuilderPlugin<S>,
  form: Static<S>,
  options: BuilderRunOptions = {},
): Promise<BuiltRow[]> {
  assertBuilder(builder, `builder ${String((builder as { id?: unknown }).id)}`);
  refuse(`${builder.id} form`, schemaErrors(builder.input, form, 'form_data'));
  builder.columns(form, options.upload ? uploadHead(options.upload) : undefined);
  const limit = options.maxRows ?? builder.maxRows;
  const rows: BuiltRow[] = [];
  if (limit <= 0) return rows;
  for await (const page of builder.run(form, testBuilderContext(builder, options))) {
    rows.push(...(Array.isArray(page) ? page : page.rows));
    if (rows.length >= limit) return rows.slice(0, limit);
  }
  return rows;
}
