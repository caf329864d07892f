import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Kernel } from '../kernel.ts';
import type { Project, Workspace } from '../model.ts';

/** How an agent should treat an operation (becomes MCP `readOnlyHint` / `destructiveHint`). */
export type AgentHint = 'read' | 'write' | 'destructive';

/** Told as long work advances (MCP `notifications/progress` when the caller asked for them). */
export type ProgressReporter = (progress: number, total: number | undefined, message: string) => void;

export interface OperationContext<P, Q, B> {
  kernel: Kernel;
  workspace: Workspace;
  /** Set when the operation declares `project: true`: the caller's live project, else a 404 was sent. */
  project: Project;
  params: P;
  query: Q;
  body: B;
  /** Set when the door can tell the caller how long work advances. */
  progress?: ProgressReporter;
  /** Aborted when the caller has gone (long waits stop early). */
  signal?: AbortSignal;
  /** The API key of the call, when it came with one: the work it starts spends against its monthly cap. */
  keyId?: string;
}

/**
 * One public action of the service, defined once. The REST route, its OpenAPI entry and
 * the MCP tool are generated from this record, so they cannot drift apart.
 */
export interface Operation<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  B extends TSchema = TSchema,
  R extends TSchema = TSchema,
> {
  /** Snake-case name; also the MCP tool name. */
  name: string;
  summary: string;
  /** Written for agents and humans alike. */
  description: string;
  hint: AgentHint;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to BASE_PATH, OpenAPI style: `/projects/{project_id}`. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Resolve `params.project_id` to the caller's project before anything else (404 otherwise). */
  project?: boolean;
  /**
   * For other owned resources (an ICP): throws a 404 when the path names something that is not the
   * caller's. Runs right after the project check, before query and body are validated, so another
   * workspace's id is a 404 whatever the request holds.
   */
  owned?(ctx: { kernel: Kernel; workspace: Workspace; params: Record<string, string> }): Promise<void>;
  /** HTTP status for invalid input when the spec names one (400 on POST /projects, 403 on POST rows). */
  invalidStatus?: number;
  successStatus?: number;
  /**
   * A second success status, told by the answer itself (POST rows: 200 when the row's unique key
   * exists and the answer names the existing row); documented with the same response schema.
   */
  otherSuccess?: { status: number; description: string; when(data: Static<R>): boolean; example: Static<R> };
  response: R;
  /**
   * REST only, no MCP tool: for a route that exists because of HTTP itself (POST rows/search holds
   * filters too long for a URL; MCP arguments have no such limit).
   */
  restOnly?: boolean;
  /**
   * Work this operation starts in the background that an MCP caller may wait for with
   * `wait_seconds` (docs/mcp.md): the project it creates (`created`: its answer's project_id), or
   * the tool columns it runs (`columns`: the path's project, the body's col_ids).
   */
  waitable?: 'created' | 'columns';
  /**
   * Starts work that spends credits: a call with an API key whose monthly cap is spent is refused
   * with 402 before it runs (the work's charges also stop at the cap).
   */
  spends?: boolean;
  /** Extra documented error statuses: status → description. */
  errors?: Record<number, string>;
  /** A typical call and its answer, shown in the API docs; typed by the schemas, checked against them by test/openapi-examples.test.ts. */
  example?: OperationExample<Static<P>, Static<Q>, Static<B>, Static<R>>;
  handler(ctx: OperationContext<Static<P>, Static<Q>, Static<B>>): Promise<Static<R>>;
}

/** One documented call: its input as the handler receives it (JSON query parameters parsed) and its answer. */
export interface OperationExample<P, Q, B, R> {
  params?: P;
  query?: Partial<Q>;
  body?: B;
  response: R;
}

export type AnyOperation = Operation<TObject, TObject, TSchema, TSchema>;

/** Identity function that gives an operation definition its types. */
export function defineOperation<P extends TObject, Q extends TObject, B extends TSchema, R extends TSchema>(
  op: Operation<P, Q, B, R>,
): Operation<P, Q, B, R> {
  return op;
}
