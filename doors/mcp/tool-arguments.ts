import type { TObject, TSchema } from '@sinclair/typebox';
import { type FieldError, ServiceError } from '../../core/errors.ts';
import type { CallInput } from '../../core/operations/call-input.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { MAX_WAIT_SECONDS } from '../../core/operations/projects.ts';
import { MAX_ID_LENGTH } from '../../core/operations/run-operation.ts';
import { inexactNumberError, parseJsonExactly } from '../../core/schema/exact-json.ts';

/** A JSON Schema as sent to MCP clients (plain data: TypeBox's symbol keys stripped). */
export type JsonSchema = Record<string, unknown>;

/** Where one tool argument goes in the operation's call. */
export interface ArgumentSpec {
  /** The argument's name: the field's own, or `<field>_json` when it carries JSON text. */
  name: string;
  field: string;
  from: 'params' | 'query' | 'body' | 'idempotency' | 'wait';
  /** JSON text: parsed by the MCP door when the pipeline reads it (malformed → parse_error). */
  json: boolean;
}

export interface ToolArguments {
  inputSchema: JsonSchema & { type: 'object' };
  specs: ArgumentSpec[];
}

const plain = (s: TSchema): JsonSchema => JSON.parse(JSON.stringify(s)) as JsonSchema;

/**
 * Objects, arrays, free-form values and strings marked `contentMediaType: application/json`
 * (filter_groups, sort_rules) travel as JSON text: agents fill flat arguments far more reliably
 * than nested ones, and the spec names these arguments `*_json`.
 */
export function carriesJson(s: JsonSchema): boolean {
  if (s.type === 'object' || s.type === 'array') return true;
  if (s.type === 'string') return s.contentMediaType === 'application/json';
  if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).some(carriesJson);
  return s.type === undefined && s.const === undefined && s.enum === undefined;
}

/** The argument schema of a JSON-carrying field: a string, described with the shape it must hold. */
function jsonArgument(s: JsonSchema): JsonSchema {
  const { description, ...shape } = s;
  // Long shapes (a waterfall step list) would drown the description; the REST docs carry them.
  const text = s.type === 'string' ? '' : JSON.stringify(shape);
  const lead = typeof description === 'string' ? `${description.replace(/\.?\s*$/, '.')} ` : '';
  const tail = text && text.length <= 1200 ? ` matching this JSON Schema: ${text}` : '';
  return { type: 'string', contentMediaType: 'application/json', description: `${lead}Send it as JSON text${tail}.` };
}

/**
 * The MCP arguments of an operation: path parameters, query parameters and body fields side by
 * side, JSON-carrying ones renamed `<field>_json`. `notes` add to a field's description (the
 * registered builder and tool ids, which change with the plugins installed).
 */
export function toolArguments(op: AnyOperation, notes: Record<string, string> = {}): ToolArguments {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const specs: ArgumentSpec[] = [];
  const add = (from: ArgumentSpec['from'], schema: TObject | undefined, isRequired: (field: string, s: JsonSchema) => boolean) => {
    if (!schema) return;
    for (const [field, prop] of Object.entries(plain(schema).properties as Record<string, JsonSchema>)) {
      if (prop['x-rest-only'] === true) continue; // a REST spelling of what another argument says (include=meta)
      const json = carriesJson(prop);
      const name = json ? `${field}_json` : field;
      if (properties[name]) throw new Error(`operation ${op.name}: two inputs map to the MCP argument "${name}"`);
      const arg = json ? jsonArgument(prop) : prop;
      if (notes[field]) arg.description = [arg.description, notes[field]].filter(Boolean).join(' ');
      properties[name] = arg;
      if (isRequired(field, prop)) required.push(name);
      specs.push({ name, field, from, json });
    }
  };
  add('params', op.params, () => true);
  // A query parameter with a default is optional to the caller even when the schema lists it.
  add('query', op.query, (field, s) => ((op.query?.required ?? []) as string[]).includes(field) && s.default === undefined);
  if (op.body && plain(op.body).type === 'object') {
    add('body', op.body as TObject, (field) => ((op.body as TObject).required ?? []).includes(field));
  } else if (op.body) {
    properties.body_json = jsonArgument(plain(op.body));
    required.push('body_json');
    specs.push({ name: 'body_json', field: '', from: 'body', json: true });
  }
  // Write tools take the REST door's Idempotency-Key as an argument.
  if (op.method === 'POST') {
    properties.idempotency_key = {
      type: 'string',
      minLength: 1,
      maxLength: 191,
      description: 'Optional. The same key on a retry returns the first answer; nothing is done or charged twice.',
    };
    specs.push({ name: 'idempotency_key', field: 'idempotency_key', from: 'idempotency', json: false });
  }
  // Work started in the background can be waited for in the same call (docs/mcp.md).
  if (op.waitable) {
    properties.wait_seconds = {
      type: 'integer',
      minimum: 0,
      maximum: MAX_WAIT_SECONDS,
      description: `Optional, 0 to ${MAX_WAIT_SECONDS}: wait up to this long for the ${op.waitable === 'created' ? 'builder run' : 'cells'} to end before answering (progress notifications meanwhile when the request carries a progressToken); the answer's "wait" says whether it ended.`,
    };
    specs.push({ name: 'wait_seconds', field: 'wait_seconds', from: 'wait', json: false });
  }
  return { inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }, specs };
}

/** Whether an argument names ids (builder_id, tool_id, project_id in a body, col_ids_json, row_ids_json…). */
const carriesIds = (spec: ArgumentSpec) => /_ids?$/.test(spec.field);

/** Details this door wrote, already in the tool's terms (argument names as the caller sent them). */
const toldInArguments = new WeakSet<object>();

export const inArgumentsAlready = (detail: unknown): boolean =>
  typeof detail === 'object' && detail !== null && toldInArguments.has(detail);

/** A validation failure of the arguments, with the status REST answers for invalid input of the same operation. */
function invalidArguments(op: AnyOperation, message: string, errors: FieldError[], status = op.invalidStatus ?? 422): ServiceError {
  const detail = { message, errors };
  toldInArguments.add(detail);
  return new ServiceError('validation_error', detail, { status });
}

/**
 * Refuses an overlong id before anything looks it up, without repeating it (it may be megabytes);
 * the pipeline does the same for path ids.
 */
function checkIds(op: AnyOperation, spec: ArgumentSpec, value: unknown): void {
  const ids = Array.isArray(value) ? value : [value];
  ids.forEach((id, i) => {
    if (typeof id !== 'string' || id.length <= MAX_ID_LENGTH) return;
    const path = Array.isArray(value) ? `${spec.name}[${i}]` : spec.name;
    throw invalidArguments(op, `${path} is ${id.length} characters long; ids are at most ${MAX_ID_LENGTH}`, [
      { path, message: `is longer than ${MAX_ID_LENGTH} characters` },
    ]);
  });
}

function parseJson(op: AnyOperation, name: string, text: string): unknown {
  let parsed: ReturnType<typeof parseJsonExactly>;
  try {
    parsed = parseJsonExactly(text);
  } catch (e) {
    throw new ServiceError(
      'parse_error',
      { message: `${name} is not valid JSON: ${(e as Error).message}`, argument: name },
      { status: 400 },
    );
  }
  if (parsed.inexact) {
    // A number JSON would change (1e309, 12345678901234567890) is refused, as on REST.
    const error = inexactNumberError(name, parsed.inexact, op.invalidStatus ?? 422);
    toldInArguments.add(error.detail as object);
    throw error;
  }
  return parsed.value;
}

/** Up to 64 characters of a name the caller sent, for a message that names it. */
const shown = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}…` : name);

/** The tool's arguments as the call pipeline takes them, plus the checks that wait for the ownership check. */
export interface DecodedArguments extends CallInput {
  /**
   * Throws what is wrong with the arguments beyond the path ids: unknown names, a bad
   * idempotency_key. Run after the ownership check (as REST validates its body), so another
   * workspace's project or ICP is a 404 whatever the other arguments hold; the body and the JSON
   * query arguments run it first when read.
   */
  check(): void;
  /** wait_seconds, when the tool takes it and it was sent. */
  waitSeconds?: number;
}

/**
 * Turns tool arguments back into the call's path, query and body, as REST's door does: path ids
 * now (the pipeline checks ownership with them), everything else when the pipeline reads it, after
 * the ownership check. JSON text is parsed when read (malformed → parse_error naming the argument);
 * a JSON argument sent as a value rather than as text is taken as that value (agents do this often).
 */
export function decodeArguments(op: AnyOperation, tool: ToolArguments, args: Record<string, unknown> = {}): DecodedArguments {
  const byName = new Map(tool.specs.map((s) => [s.name, s]));
  const unknown = Object.keys(args).filter((k) => !byName.has(k));
  const late: ServiceError[] = [];
  if (unknown.length) {
    const allowed = tool.specs.map((s) => s.name).join(', ') || 'none';
    const names = unknown.slice(0, 5).map(shown);
    late.push(
      invalidArguments(
        op,
        `Unknown argument${unknown.length > 1 ? 's' : ''} ${names.join(', ')}${unknown.length > 5 ? ', …' : ''}; this tool takes: ${allowed}`,
        names.map((k) => ({ path: k, message: 'is not an argument of this tool' })),
      ),
    );
  }
  const check = () => {
    if (late[0]) throw late[0];
  };
  const params: Record<string, string> = {};
  const query: CallInput['query'] = {};
  const bodyFields: [ArgumentSpec, unknown][] = [];
  let idempotencyKey: string | undefined;
  let waitSeconds: number | undefined;
  const decode = (spec: ArgumentSpec, v: unknown) => {
    const value = spec.json && typeof v === 'string' ? parseJson(op, spec.name, v) : v;
    if (carriesIds(spec)) checkIds(op, spec, value);
    return value;
  };
  for (const spec of tool.specs) {
    const value = args[spec.name];
    if (spec.from === 'idempotency') {
      if (value === undefined || (typeof value === 'string' && value !== '')) idempotencyKey = value;
      // 422 as REST answers a bad Idempotency-Key header, whatever the operation's invalid-input status.
      else
        late.push(
          invalidArguments(
            op,
            'idempotency_key must be a non-empty string',
            [{ path: spec.name, message: 'must be a non-empty string' }],
            422,
          ),
        );
    } else if (spec.from === 'wait') {
      if (value === undefined) continue;
      if (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_WAIT_SECONDS) waitSeconds = value as number;
      else
        late.push(
          invalidArguments(op, `wait_seconds must be an integer from 0 to ${MAX_WAIT_SECONDS}`, [
            { path: spec.name, message: `must be an integer from 0 to ${MAX_WAIT_SECONDS}` },
          ]),
        );
    } else if (spec.from === 'params') {
      // Path ids stay as sent: the pipeline refuses an overlong one before its ownership lookup.
      if (typeof value !== 'string' || value === '') {
        throw invalidArguments(op, `${spec.name} is required (a string)`, [{ path: spec.name, message: 'is required' }]);
      }
      params[spec.field] = value;
    } else if (value === undefined || value === null) {
      if (spec.from === 'body' && value === null) bodyFields.push([spec, null]);
    } else if (spec.from === 'query') {
      // Scalars travel as a URL would carry them (the pipeline converts "5" → 5 where the schema asks).
      query[spec.field] =
        spec.json || carriesIds(spec)
          ? () => {
              check();
              return decode(spec, value);
            }
          : typeof value === 'string'
            ? value
            : String(value);
    } else {
      bodyFields.push([spec, value]);
    }
  }
  const body = () => {
    check();
    const whole = bodyFields.find(([spec]) => spec.field === '');
    if (whole) return decode(...whole);
    return Object.fromEntries(bodyFields.map(([spec, v]) => [spec.field, decode(spec, v)]));
  };
  return { params, query, body, check, ...(idempotencyKey ? { idempotencyKey } : {}), ...(waitSeconds ? { waitSeconds } : {}) };
}
