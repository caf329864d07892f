import type { Static, TObject } from '@sinclair/typebox';
import type { Expressions } from '../expressions/expression-pool.ts';

/** What a plugin may see of the host while it runs. Plugins never touch storage, queue or credits. */
export interface PluginContext {
  /** `sandbox` plugins return deterministic fake data and call no provider. */
  providerMode: 'live' | 'sandbox';
  /** Reads a variable the plugin declared in `provider.requiredEnv` / `optionalEnv`, at call time; any other name answers undefined. */
  env(name: string): string | undefined;
  /** Aborted when the job is cancelled or the worker shuts down. */
  signal: AbortSignal;
  log(message: string, fields?: Record<string, unknown>): void;
}

/** What a tool may use beyond the shared context. */
export interface ToolContext extends PluginContext {
  /**
   * Evaluates JSONata written by a tenant (a formula, an extract) in the host's sandbox threads,
   * under its time, depth and memory bounds; never call `jsonata().evaluate` on tenant text yourself.
   */
  expressions: Expressions;
}

/** A row produced by a builder: input column name → value. */
export type BuiltRow = Record<string, unknown>;

/** A page of rows with the plugin's resume point after it (e.g. the provider's next page token). */
export interface BuilderPage {
  rows: BuiltRow[];
  cursor?: unknown;
}

/** What a builder knows of an uploaded file before its run: its name, size and first characters. */
export interface UploadHead {
  name: string;
  bytes: number;
  /** The file's first characters (at least its first 64 KiB, or all of it). */
  head: string;
}

export interface BuilderRunContext extends PluginContext {
  /** Rows the host writes best per page on its database (larger on MySQL/MariaDB than on SQLite): a page size for sources that can choose. */
  pageRows: number;
  /** The uploaded file the form names (builders that declare `uploads`): its text, a part at a time. */
  upload?: UploadHead & { text(): AsyncIterable<string> };
  /**
   * Set when a run is taken over after a crash: the cursor of the last page written. A plugin that
   * yields cursors continues after it; otherwise the host skips the rows it already has.
   */
  resume?: { cursor: unknown };
}

export interface ProviderNeeds {
  /** Provider name shared by plugins that spend one budget (e.g. "apollo"); defaults to the plugin id. */
  id?: string;
  /** Credentials and base URLs it reads, by env var name. Live mode without them fails the run. */
  requiredEnv: string[];
  optionalEnv?: string[];
  /**
   * Requests per second and burst for the whole deployment: one token per provider request — a
   * builder page, an `enrich` batch or an `enrichOne` row.
   */
  rateLimit?: { perSecond: number; burst?: number };
}

/** Fields every plugin shares. */
export interface PluginBase<S extends TObject = TObject> {
  /** Stable public slug (`a-z`, `0-9`, `_`). Never change it once published. */
  id: string;
  version: string;
  /**
   * The SDK versions this plugin works with, as a semver range (`^1.1` for one that uses
   * `enrichOne`); a host whose SDK does not fit refuses it at start, naming it. Default `^1.0.0`.
   */
  sdk?: string;
  name: string;
  /**
   * Written for people (the console shows it): one plain sentence on what it gives them, without
   * config or field names. Default: the first sentence of `description`. Since SDK 1.2.
   */
  summary?: string;
  /** Written for agents: what it does, what it needs, what it costs. */
  description: string;
  category: string;
  tags: string[];
  /** Older ids still accepted on creation. */
  legacyIds: string[];
  /** The form (builder) or column config (tool). Drives validation, the catalog, OpenAPI and MCP. */
  input: S;
  /** The provider it calls. The host enforces the rate limit (shared by all workers), not the plugin. */
  provider?: ProviderNeeds;
  /** Credits charged per unit (a row for builders). */
  cost: { credits: number; per: 'row' | 'result' | 'attempt' };
}

export interface BuilderPlugin<S extends TObject = TObject> extends PluginBase<S> {
  kind: 'builder';
  /**
   * Upper bound of rows one run may create. Yield every row the source has: the host writes up to
   * this (or the plan's quota) and, seeing more, completes the run with a warning saying so.
   */
  maxRows: number;
  /**
   * Takes an uploaded file (POST /projects/import.csv): its media types. The form then names the
   * upload (`upload_id`), the host checks it is the caller's, and hands the file's start to
   * columns/target/projectName and the whole file to run (`ctx.upload`).
   */
  uploads?: { mediaTypes: string[] };
  /** The input columns the project gets, in order, known from the form (and an upload's start) before the run starts. */
  columns(form: Static<S>, upload?: UploadHead): string[];
  /** A default project name when the caller gives none. */
  projectName(form: Static<S>, upload?: UploadHead): string;
  /** Rows the run aims at (for progress and credit reservation). */
  target(form: Static<S>, upload?: UploadHead): number;
  /** Yields pages of rows; the host writes each page (with its cursor) before asking for the next. */
  run(form: Static<S>, ctx: BuilderRunContext): AsyncIterable<BuiltRow[] | BuilderPage>;
}

export type AnyBuilder = BuilderPlugin<TObject>;

/** One row handed to a tool: its id and the column config rendered over the row's values. */
export interface ToolItem<C> {
  rowId: string;
  /** The column config with every `{{Column Name}}` replaced by that row's value. */
  config: C;
  /** The row's values by column name (for tools that read the whole row: a formula, an ICP score). */
  row: Record<string, unknown>;
}

/** What a tool found for one row. */
export type EnrichResult = (
  | { status: 'ok'; value: unknown }
  | { status: 'no_result'; reason?: string }
  | {
      status: 'error';
      error: string;
      retryable: boolean;
      /**
       * With `retryable` (SDK 1.4): the provider's Retry-After in ms. The row is retried no sooner
       * (up to JOB_MAX_RETRY_DELAY_MS), and a provider with a `rateLimit` gets no request meanwhile.
       * A thrown ProviderError's `retryAfterMs` counts the same.
       */
      retryAfterMs?: number;
    }
) & {
  /**
   * For a tool priced per unit (`costUnits`, SDK 1.3): the units this row used. The credits of the
   * units it did not use are given back; a result without it counts as one unit.
   */
  units?: number;
};

export interface ToolPlugin<S extends TObject = TObject> extends PluginBase<S> {
  kind: 'tool';
  /** Config fields that must be non-empty after rendering; a row missing one is `skipped`. */
  requires: string[];
  /**
   * Config fields holding a JSONata expression over the row, column names as fields (a formula's
   * `expression`; SDK 1.2). The host reads them to refuse renaming a column they name (409: edit
   * the expression first), which would otherwise leave it reading a field that no longer exists.
   */
  rowExpressions?: string[];
  /** The fields its value carries (waterfalls group tools that produce the same field). */
  produces: { field: string; description: string }[];
  /**
   * Rows per `enrich` call. It also sizes the host's enrichment jobs (two batches, at least 50
   * rows): an `enrichOne` tool's rows are spread over jobs by it.
   */
  batchSize: number;
  /**
   * For a provider that answers many rows in one request: one result per item, in order. A thrown
   * error fails the whole batch (retried if retryable). A tool defines this or `enrichOne`.
   */
  enrich?(items: ToolItem<Static<S>>[], ctx: ToolContext): Promise<EnrichResult[]>;
  /**
   * For a provider asked once per row: this row's result. The host runs up to `concurrency` rows at
   * once and takes one token of the provider's rate limit per row, so `rateLimit.perSecond` counts
   * requests. A thrown error (429, 5xx, a refused key) stops the rows not yet started: they and
   * this one take it (retried if retryable); rows already answered keep their answers.
   */
  enrichOne?(item: ToolItem<Static<S>>, ctx: ToolContext): Promise<EnrichResult>;
  /** Rows of an `enrichOne` tool in flight at once, in one job (default 5). */
  concurrency?: number;
  /**
   * For a tool whose rows cost a varying number of units (an agent's searches and page reads; SDK
   * 1.3): the most units one row may use under this column config, read from the config as written
   * (before `{{Column}}` templates). Each unit costs `cost.credits` (`per: 'attempt'`): a row is
   * charged for all of them before it runs and given back those its result did not use (`units`);
   * estimates count them all. Without it a row is one unit.
   */
  costUnits?(config: Static<S>): number;
  /** Whether a found value is good enough (a waterfall stops at the first valid one). */
  isValid?(value: unknown): boolean;
  /**
   * Checks of the column config that its schema cannot express (a JSONata expression that must
   * compile, a JSON Schema that must be valid); each problem becomes a 422 naming the field.
   */
  checkConfig?(config: Static<S>): { path: string; message: string }[];
  /** A key under which a result may be reused for `cacheTtlMs`, so a paid lookup is not paid twice. */
  cacheKey?(item: ToolItem<Static<S>>): string | null;
  cacheTtlMs?: number;
}

export type AnyTool = ToolPlugin<TObject>;

/** Identity function that gives a tool definition its types. */
export function defineTool<S extends TObject>(def: ToolPlugin<S>): ToolPlugin<S> {
  return def;
}

/** Identity function that gives a builder definition its types. */
export function defineBuilder<S extends TObject>(def: BuilderPlugin<S>): BuilderPlugin<S> {
  return def;
}

/** What a plugin gives people, in one sentence: its `summary`, else its description's first sentence. */
export function summaryOf(p: { summary?: string; description: string }): string {
  if (p.summary) return p.summary;
  const first = /^.*?[.!?](?=\s|$)/.exec(p.description)?.[0];
  return first ?? p.description;
}
