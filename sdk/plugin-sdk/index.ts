/**
 * `workflow-service/plugin-sdk`: the one module a plugin imports from the host, wherever the plugin
 * lives (plugins/ of the repo, a PLUGINS_DIR folder anywhere on disk, an npm package named in
 * PLUGINS). It re-exports the contract's types, the definition helpers, TypeBox's `Type`, the
 * provider HTTP helpers (every outbound request goes through the host's network policy), the
 * sandbox data helpers and the few checks plugins share with the host. See docs/plugins.md.
 *
 * ```ts
 * import { Type, defineTool, providerJson, requireEnv, rowFailure } from 'workflow-service/plugin-sdk';
 * ```
 */

/** The SDK's version (semver): a plugin names the versions it works with in `sdk` (docs/plugins.md). */
export { SDK_VERSION as version } from '../../core/plugins/sdk-version.ts';

// ─── The contract ───────────────────────────────────────────────────────────────────────────────

export { defineBuilder, defineTool } from '../../core/plugins/plugin-types.ts';
export type {
  AnyBuilder,
  AnyTool,
  BuilderPage,
  BuilderPlugin,
  BuilderRunContext,
  BuiltRow,
  EnrichResult,
  PluginBase,
  PluginContext,
  ProviderNeeds,
  ToolContext,
  ToolItem,
  ToolPlugin,
  UploadHead,
} from '../../core/plugins/plugin-types.ts';
export type { ExpressionOutcome, Expressions } from '../../core/expressions/expression-pool.ts';

/** TypeBox, the schema language of a plugin's `input` (the same copy the host validates with). */
export { Type } from '@sinclair/typebox';
export type { Static, TObject, TSchema } from '@sinclair/typebox';

// ─── Calling providers ──────────────────────────────────────────────────────────────────────────

export {
  ProviderError,
  type ProviderRequest,
  providerJson,
  providerRequest,
  redact,
  requireEnv,
  rowFailure,
  statusError,
} from '../../core/plugins/provider-http.ts';
export {
  BlockedUrlError,
  DEFAULT_MAX_BYTES,
  FetchTimeoutError,
  InvalidRequestError,
  RedirectError,
  ResponseTooLargeError,
  type SafeFetchInit,
  type SafeResponse,
  safeFetch,
} from '../../core/plugins/safe-fetch.ts';

// ─── Sandbox twins ──────────────────────────────────────────────────────────────────────────────

export {
  SANDBOX_CITIES,
  SANDBOX_FIRST,
  SANDBOX_INDUSTRIES,
  SANDBOX_LAST,
  mulberry32,
  pages,
  pick,
  exampleTwin,
  sandboxDomain,
  sandboxPhone,
  sandboxSlug,
  seededRandom,
  slugify,
} from '../../core/plugins/sandbox-data.ts';

// ─── Checks shared with the host ────────────────────────────────────────────────────────────────

/** A form the schema accepted but the builder cannot use (a CSV without header): a 422 naming the field. */
export { type FieldError, validationError } from '../../core/errors.ts';
/** The CSV export's formula guard read back (`'=x` → `=x`), for builders that import CSV files. */
export { fromSpreadsheetSafe } from '../../core/rows/spreadsheet-text.ts';
/** For `checkConfig`: a JSONata config field that does not parse, as a `{path, message}` problem. */
export { jsonataProblems } from '../../core/columns/run-condition.ts';
