import { Kind } from '@sinclair/typebox';
import { DEFAULT_SDK_RANGE, SDK_VERSION } from './sdk-version.ts';
import type { AnyBuilder, AnyTool } from './plugin-types.ts';

/**
 * The checks every plugin definition passes before anything can call it: at start-up (bundled,
 * PLUGINS_DIR and PLUGINS plugins alike) and in plugin-testing. Each failure names the plugin and
 * the field, so its author can fix it.
 */

const SLUG = /^[a-z][a-z0-9_]{1,63}$/;

/** A plugin whose definition is unusable; names the plugin and the field so the author can fix it. */
export class PluginDefinitionError extends Error {
  constructor(where: string, field: string, problem: string) {
    super(`plugin ${where}: field "${field}" ${problem}`);
    this.name = 'PluginDefinitionError';
  }
}

type Def = Record<string, unknown>;

/** Field checks shared by builders and tools. */
function assertBase(d: Def, where: string, kind: 'builder' | 'tool'): void {
  const str = (f: string) => {
    if (typeof d[f] !== 'string' || d[f] === '') throw new PluginDefinitionError(where, f, 'must be a non-empty string');
  };
  if (d.kind !== kind) throw new PluginDefinitionError(where, 'kind', `must be "${kind}"`);
  str('id');
  if (!SLUG.test(d.id as string)) throw new PluginDefinitionError(where, 'id', `must match ${SLUG}`);
  for (const f of ['version', 'name', 'description', 'category']) str(f);
  if (d.summary !== undefined && (typeof d.summary !== 'string' || d.summary === '' || d.summary.length > 200))
    throw new PluginDefinitionError(where, 'summary', 'must be one sentence of 1 to 200 characters (or left out)');
  assertSdkFits(d.sdk, where);
  for (const f of ['tags', 'legacyIds']) {
    if (!Array.isArray(d[f]) || !(d[f] as unknown[]).every((x) => typeof x === 'string'))
      throw new PluginDefinitionError(where, f, 'must be an array of strings');
  }
  const input = d.input as Record<string | symbol, unknown> | undefined;
  if (input?.[Kind] !== 'Object') throw new PluginDefinitionError(where, 'input', 'must be a TypeBox Type.Object schema');
  const cost = d.cost as Record<string, unknown> | undefined;
  if (!cost || typeof cost.credits !== 'number' || cost.credits < 0)
    throw new PluginDefinitionError(where, 'cost.credits', 'must be a number >= 0');
  if (!['row', 'result', 'attempt'].includes(cost.per as string))
    throw new PluginDefinitionError(where, 'cost.per', 'must be "row", "result" or "attempt"');
  const provider = d.provider as Record<string, unknown> | undefined;
  if (provider !== undefined && (!Array.isArray(provider.requiredEnv) || !provider.requiredEnv.every((x) => typeof x === 'string')))
    throw new PluginDefinitionError(where, 'provider.requiredEnv', 'must be an array of env var names');
}

/** A plugin written for another SDK is refused by name, before anything can call it. */
function assertSdkFits(given: unknown, where: string): void {
  const range = given === undefined ? DEFAULT_SDK_RANGE : given;
  if (typeof range !== 'string' || range.trim() === '')
    throw new PluginDefinitionError(where, 'sdk', 'must be a semver range such as "^1.1"');
  // Bun's semver takes any text (a word satisfies everything): a range is digits and operators.
  if (!/^[\s\d.xX*^~<>=|-]+$/.test(range) || !/\d/.test(range)) {
    throw new PluginDefinitionError(where, 'sdk', `"${range.slice(0, 50)}" is not a semver range (such as "^1.1")`);
  }
  if (!Bun.semver.satisfies(SDK_VERSION, range)) {
    throw new PluginDefinitionError(
      where,
      'sdk',
      `needs plugin SDK ${range}; this service has ${SDK_VERSION}: upgrade the service, or install a version of the plugin for SDK ${SDK_VERSION}`,
    );
  }
}

function assertFunctions(d: Def, where: string, names: string[]): void {
  for (const f of names) if (typeof d[f] !== 'function') throw new PluginDefinitionError(where, f, 'must be a function');
}

/** Checks the shape of a builder definition at start-up, before anything can call it. */
export function assertBuilder(def: unknown, where: string): asserts def is AnyBuilder {
  if (!def || typeof def !== 'object') throw new PluginDefinitionError(where, '(default export)', 'must be a builder definition object');
  const d = def as Def;
  assertBase(d, where, 'builder');
  if (typeof d.maxRows !== 'number' || d.maxRows < 1) throw new PluginDefinitionError(where, 'maxRows', 'must be a number >= 1');
  assertFunctions(d, where, ['columns', 'projectName', 'target', 'run']);
}

/** Checks the shape of a tool definition at start-up. */
export function assertTool(def: unknown, where: string): asserts def is AnyTool {
  if (!def || typeof def !== 'object') throw new PluginDefinitionError(where, '(default export)', 'must be a tool definition object');
  const d = def as Def;
  assertBase(d, where, 'tool');
  if (!Array.isArray(d.requires) || !d.requires.every((x) => typeof x === 'string'))
    throw new PluginDefinitionError(where, 'requires', 'must be an array of config field names');
  const props = (d.input as { properties: Record<string, unknown> }).properties;
  for (const r of d.requires as string[]) {
    if (!(r in props)) throw new PluginDefinitionError(where, 'requires', `names "${r}", which is not a field of input`);
  }
  if (d.rowExpressions !== undefined) {
    if (!Array.isArray(d.rowExpressions) || !d.rowExpressions.every((x) => typeof x === 'string'))
      throw new PluginDefinitionError(where, 'rowExpressions', 'must be an array of config field names when set');
    for (const r of d.rowExpressions as string[]) {
      if (!(r in props)) throw new PluginDefinitionError(where, 'rowExpressions', `names "${r}", which is not a field of input`);
    }
  }
  if (!Array.isArray(d.produces) || d.produces.length === 0 || !d.produces.every((p) => p && typeof p.field === 'string'))
    throw new PluginDefinitionError(where, 'produces', 'must be a non-empty array of {field, description}');
  if (typeof d.batchSize !== 'number' || !Number.isInteger(d.batchSize) || d.batchSize < 1)
    throw new PluginDefinitionError(where, 'batchSize', 'must be an integer >= 1');
  const ways = ['enrich', 'enrichOne'].filter((f) => typeof d[f] === 'function');
  if (ways.length !== 1) {
    throw new PluginDefinitionError(
      where,
      'enrich',
      ways.length ? 'define enrich or enrichOne, not both' : 'define enrich(items, ctx) or enrichOne(item, ctx)',
    );
  }
  if (
    d.concurrency !== undefined &&
    (typeof d.concurrency !== 'number' || !Number.isInteger(d.concurrency) || d.concurrency < 1 || d.concurrency > 100)
  )
    throw new PluginDefinitionError(where, 'concurrency', 'must be an integer from 1 to 100');
  if (d.costUnits !== undefined && (d.cost as { per?: unknown }).per !== 'attempt')
    throw new PluginDefinitionError(where, 'costUnits', 'needs cost.per "attempt" (each unit is charged before the row runs)');
  for (const f of ['enrich', 'enrichOne', 'isValid', 'cacheKey', 'checkConfig', 'costUnits']) {
    if (d[f] !== undefined && typeof d[f] !== 'function') throw new PluginDefinitionError(where, f, 'must be a function when set');
  }
}
