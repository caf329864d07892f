import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project, Workspace } from '../model.ts';
import { queryValue, schemaErrors } from '../schema/validate.ts';
import { withIdempotency } from './idempotency.ts';
import type { AnyOperation } from './operation.ts';

/** Raw input of one call, as it arrives at a door (REST today, MCP later). */
export interface RawCall {
  workspace: Workspace;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The parsed body, or a function that parses it (so a bad body on a foreign project is still a 404). */
  body: () => unknown;
  /** Idempotency-Key (REST header) or idempotency_key (MCP argument), honoured on POST operations. */
  idempotencyKey?: string;
  /** The caller's project, when the door read it with the key (`null`: no such project in the workspace). */
  project?: Project | null;
}

function invalid(op: AnyOperation, what: string, errors: { path: string; message: string }[]): ServiceError {
  return new ServiceError(
    'validation_error',
    { message: `Invalid ${what}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors },
    { status: op.invalidStatus ?? 422 },
  );
}

function checked<S extends TSchema>(op: AnyOperation, what: string, schema: S, value: unknown, root: string): Static<S> {
  const errors = schemaErrors(schema, value, root);
  if (errors.length) throw invalid(op, what, errors);
  return value as Static<S>;
}

/** Query values arrive as text; defaults fill gaps, then the schema converts and checks them. */
function queryInput(op: AnyOperation, schema: TObject, raw: Record<string, string>) {
  const input: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema.properties) as [string, TSchema][]) {
    if (raw[key] !== undefined) input[key] = queryValue(prop, raw[key]);
    else if (prop.default !== undefined) input[key] = prop.default;
  }
  return checked(op, 'query parameters', schema, input, '');
}

/**
 * Runs an operation with the kernel's order of checks: the caller's project first (another
 * workspace's project is a 404 whatever the input), then query, then body, then the handler.
 */
export async function runOperation(kernel: Kernel, op: AnyOperation, call: RawCall): Promise<unknown> {
  if (call.idempotencyKey && op.method === 'POST') {
    let body: unknown;
    try {
      body = op.body ? call.body() : undefined;
    } catch {
      body = null; // unparseable: the run below answers the error; the key still guards it
    }
    const input = { params: call.params, query: call.query, body };
    return withIdempotency(kernel, op, call.workspace, call.idempotencyKey, input, () => runChecked(kernel, op, call));
  }
  return runChecked(kernel, op, call);
}

async function runChecked(kernel: Kernel, op: AnyOperation, call: RawCall): Promise<unknown> {
  let project: Project | undefined;
  if (op.project) {
    const id = call.params.project_id ?? '';
    project = call.project === undefined ? await kernel.storage.projects.get(call.workspace.id, id) : (call.project ?? undefined);
    if (!project) throw new ServiceError('not_found', `Project ${id} not found (or not in this workspace)`);
  }
  if (op.owned) await op.owned({ kernel, workspace: call.workspace, params: call.params });
  const params = op.params ? checked(op, 'path parameters', op.params, call.params, '') : {};
  const query = op.query ? queryInput(op, op.query, call.query) : {};
  let body: unknown = undefined;
  if (op.body) body = checked(op, 'body', op.body, call.body(), '');
  try {
    return await op.handler({ kernel, workspace: call.workspace, project: project as Project, params, query, body });
  } catch (e) {
    // A handler's validation failure takes the operation's spec status (400 / 403) unless it chose one.
    if (e instanceof ServiceError && e.code === 'validation_error' && e.status === 422 && op.invalidStatus) {
      throw e.withStatus(op.invalidStatus);
    }
    throw e;
  }
}
