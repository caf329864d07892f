import type { TSchema } from '@sinclair/typebox';
import { IcpDefinitionSchema } from '../../core/icp/definition.ts';
import { listBuilders } from '../../core/operations/builders.ts';
import { getIcp } from '../../core/operations/icps.ts';
import { listRowsOp } from '../../core/operations/rows.ts';
import {
  BuilderStatusSchema,
  CellSchema,
  ColumnSchema,
  ErrorBody,
  ExecutionLogEntrySchema,
  ProjectDetailsSchema,
  ProjectSummarySchema,
  RowSchema,
  WaterfallStepSchema,
} from '../../core/operations/schemas.ts';
import { listTools } from '../../core/operations/tools.ts';
import { FilterGroup, FilterGroups, FilterRule, SortRule, SortRules } from '../../core/rows/filter-schema.ts';

/** A JSON Schema (or any OpenAPI object) as the document holds it. */
export type Json = Record<string, unknown>;

/**
 * The shared schemas the document names under `components.schemas`. Wherever one occurs in an
 * operation's schemas (the same JSON, its description aside) it becomes a `$ref`, so the operation
 * definitions need not know about OpenAPI. A schema left out is simply written inline.
 */
const NAMED: Record<string, TSchema> = {
  ErrorBody,
  Cell: CellSchema,
  Row: RowSchema,
  RowsPage: listRowsOp.response,
  Column: ColumnSchema,
  InputColumn: ColumnSchema.anyOf[0],
  ToolColumn: ColumnSchema.anyOf[1],
  WaterfallStep: WaterfallStepSchema,
  BuilderStatus: BuilderStatusSchema,
  ExecutionLogEntry: ExecutionLogEntrySchema,
  ProjectSummary: ProjectSummarySchema,
  ProjectDetails: ProjectDetailsSchema,
  Builder: listBuilders.response.items,
  Tool: listTools.response.items,
  FilterRule,
  FilterGroup,
  FilterGroups,
  SortRule,
  SortRules,
  IcpDefinition: IcpDefinitionSchema,
  Icp: getIcp.response,
};

/**
 * Fields the service validates loosely so that its own check can answer sharper messages (the
 * filters of rows/search and PUT filters, the JSON query parameters of GET rows): documented with
 * the shape that check accepts.
 */
export const CHECKED_SHAPES: Record<string, string> = { filter_groups: 'FilterGroups', sort_rules: 'SortRules' };

export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** TypeBox schemas are JSON Schema already; this drops TypeBox's symbol keys. */
function plain(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** What identifies a named schema: its JSON without its own description (a use may describe it its own way). */
const identity = (schema: Json): string => JSON.stringify({ ...schema, description: undefined });

const namedByIdentity = new Map<string, string>();
for (const [name, schema] of Object.entries(NAMED)) {
  const key = identity(plain(schema));
  const other = namedByIdentity.get(key);
  if (other) throw new Error(`openapi: the named schemas ${other} and ${name} are the same JSON; name only one`);
  namedByIdentity.set(key, name);
}

/** Keys whose values are data, not schemas: never turned into references. */
const VALUE_KEYS = new Set(['const', 'default', 'enum', 'example', 'examples']);

function convert(node: unknown, self?: string): unknown {
  if (Array.isArray(node)) return node.map((item) => convert(item));
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Json;
  const name = namedByIdentity.get(identity(schema));
  if (name !== undefined && name !== self) {
    const own = (NAMED[name] as TSchema).description;
    return schema.description !== undefined && schema.description !== own
      ? { ...schemaRef(name), description: schema.description }
      : schemaRef(name);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    // TypeBox's recursive schemas carry an `$id` and point back with `"$ref": "<id>"`: in the
    // document the component name stands for the id (an `$id` would re-base every `$ref` inside).
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) {
      if (!(value in NAMED)) throw new Error(`openapi: the recursive schema "${value}" must be named in openapi-schemas.ts`);
      out.$ref = schemaRef(value).$ref;
    } else {
      out[key] = VALUE_KEYS.has(key) ? value : convert(value);
    }
  }
  return out;
}

/** A TypeBox schema as the document writes it: plain JSON Schema, the named schemas as `$ref`s. */
export function schemaObject(schema: TSchema): Json {
  return convert(plain(schema)) as Json;
}

function refsIn(node: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        found.add(value.slice('#/components/schemas/'.length));
      } else refsIn(value, found);
    }
  }
  return found;
}

/**
 * A component's optional properties tell their default in words. openapi-typescript types a
 * component property with a `default` as always present: true of an answer the service fills in,
 * not of a filter rule a client sends or the saved filters it gets back as sent.
 */
function defaultsInWords(schema: Json): void {
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    if (required.has(name) || prop.default === undefined) continue;
    const said = `Default: ${JSON.stringify(prop.default)}.`;
    prop.description = prop.description === undefined ? said : `${prop.description} ${said}`;
    delete prop.default;
  }
  const subschemas = [
    ...Object.values((schema.properties ?? {}) as Record<string, Json>),
    ...Object.values((schema.patternProperties ?? {}) as Record<string, Json>),
    ...(['anyOf', 'oneOf', 'allOf'] as const).flatMap((key) => (schema[key] ?? []) as Json[]),
    ...[schema.items, schema.additionalProperties].filter((s): s is Json => typeof s === 'object' && s !== null),
  ];
  for (const sub of subschemas) defaultsInWords(sub);
}

/** `components.schemas`: every named schema the paths refer to, and those they refer to in turn. */
export function componentSchemas(paths: unknown): Record<string, Json> {
  const definitions: Record<string, Json> = {};
  const pending = [...refsIn(paths, new Set())];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (definitions[name]) continue;
    const schema = NAMED[name];
    if (!schema) throw new Error(`openapi: no named schema ${name}`);
    const definition = convert(plain(schema), name) as Json;
    defaultsInWords(definition);
    definitions[name] = definition;
    pending.push(...refsIn(definition, new Set()));
  }
  return Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b)));
}
