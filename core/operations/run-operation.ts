import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project, Workspace } from '../model.ts';
import { admitCall } from '../services/admission.ts';
import { refuseSpentKey } from '../credits/key-caps.ts';
import { authenticateFor, type KeyHolder } from '../identity/api-keys.ts';
import { type CallInput, checkInput } from './call-input.ts';
import { withIdempotency } from './idempotency.ts';
import type { AnyOperation, ProgressReporter } from './operation.ts';
import { failureOf, type Outcome } from './outcome.ts';

/**
 * The one call pipeline of both doors (docs/architecture.md): authenticate → admit (plan, rate) →
 * resolve ownership → validate → run the operation → map the outcome. A door only translates its
 * transport: REST a request into a Call and the Outcome into a response, MCP tool arguments into
 * a Call and the Outcome into an envelope.
 */

/** A caller as its door authenticated it: allowed into a workspace, or denied with the reason every call answers. */
export interface Caller {
  /** Whose request budget a call spends: per API key (the same for both doors) or per OAuth subject. */
  rateKey: string;
  /** The API key the caller presented (spending counts against its monthly cap); none for people and OAuth tokens. */
  keyId?: string;
  workspace?: Workspace;
  /** Why this caller may not use the API (a plan without API access, the database away…), answered on every call. */
  denied?: unknown;
  /** A project read together with the key (one query): used when the call names that project. */
  project?: { id: string; project: Project | null };
}

/** Who calls, as the door presents it. */
export type Credentials =
  /** REST: the service-api-key header, checked here together with the route's project. */
  | { apiKey: string | null; projectId?: string }
  /** MCP: the door authenticated the HTTP request (its 401 is an HTTP answer, before any tool call). */
  | { caller: Caller };

export interface Call {
  op: AnyOperation;
  credentials: Credentials;
  /** The door's translation of its request, asked for once the caller is admitted. */
  input: () => CallInput | Promise<CallInput>;
  /** Named by internal_error and unavailable answers, and by the log lines about them. */
  requestId: string;
  /** Told the key's prefix and workspace once authentication finds them (the access log). */
  access?: KeyHolder;
  /** Progress of long work, for a door that can stream it. */
  progress?: ProgressReporter;
  signal?: AbortSignal;
}

/** A caller allowed in: its workspace, its request budget and the project read with its key. */
type Authenticated = Required<Pick<Caller, 'workspace' | 'rateKey'>> & Pick<Caller, 'project' | 'keyId'>;

async function authenticate(kernel: Kernel, call: Call): Promise<Authenticated> {
  const { credentials } = call;
  if ('caller' in credentials) {
    const { workspace, rateKey, project, denied, keyId } = credentials.caller;
    if (!workspace) throw denied ?? new ServiceError('unauthorized', { message: 'Missing credentials' });
    return { workspace, rateKey, project, keyId };
  }
  // An id no project can have is not looked up (the ownership step refuses it).
  const projectId =
    credentials.projectId !== undefined && credentials.projectId.length <= MAX_ID_LENGTH ? credentials.projectId : undefined;
  const found = await authenticateFor(kernel.storage.workspaces, credentials.apiKey, projectId, call.access);
  const project = projectId === undefined ? undefined : { id: projectId, project: found.project ?? null };
  return { workspace: found.workspace, rateKey: found.rateKey, keyId: found.keyId, project };
}

/** The input with each part parsed at most once, however often the pipeline reads it. */
function parsedOnce(input: CallInput): CallInput {
  const once = (parse: () => unknown) => {
    let outcome: { value: unknown } | { error: unknown } | undefined;
    return () => {
      if (!outcome) {
        try {
          outcome = { value: parse() };
        } catch (error) {
          outcome = { error };
        }
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    };
  };
  const query = Object.fromEntries(Object.entries(input.query).map(([k, v]) => [k, typeof v === 'function' ? once(v) : v]));
  return { ...input, query, body: once(input.body) };
}

/** What an idempotency key guards: the request as parsed (a part that does not parse counts as null). */
function requestOf(op: AnyOperation, input: CallInput): unknown {
  const parsed = (read: () => unknown) => {
    try {
      return read();
    } catch {
      return null; // the run answers the error; the key still guards the request
    }
  };
  const query = Object.fromEntries(Object.entries(input.query).map(([k, v]) => [k, typeof v === 'function' ? parsed(v) : v]));
  return { params: input.params, query, body: op.body ? parsed(input.body) : undefined };
}

/** Ids the service makes are far shorter; a longer one names nothing and is refused before any lookup. */
export const MAX_ID_LENGTH = 128;

/** Resolve ownership: the caller's live project (read with the key when the door could), and other owned resources. */
async function ownedProject(
  kernel: Kernel,
  op: AnyOperation,
  caller: Authenticated,
  params: Record<string, string>,
): Promise<Project | undefined> {
  for (const [name, value] of Object.entries(params ?? {})) {
    if (value.length > MAX_ID_LENGTH) {
      // Never echoed: a megabyte of id would come back in the answer, twice on MCP.
      throw new ServiceError('validation_error', {
        message: `${name} is ${value.length} characters long; ids are at most ${MAX_ID_LENGTH}`,
        errors: [{ path: name, message: `is longer than ${MAX_ID_LENGTH} characters` }],
      });
    }
  }
  let project: Project | undefined;
  if (op.project) {
    const id = params.project_id ?? '';
    const known = caller.project?.id === id ? caller.project.project : await kernel.storage.projects.get(caller.workspace.id, id);
    if (!known) throw new ServiceError('not_found', `Project ${id} not found (or not in this workspace)`);
    project = known;
  }
  if (op.owned) await op.owned({ kernel, workspace: caller.workspace, params });
  return project;
}

async function execute(kernel: Kernel, call: Call, caller: Authenticated, input: CallInput): Promise<unknown> {
  const { op } = call;
  const project = await ownedProject(kernel, op, caller, input.params);
  const { params, query, body } = checkInput(op, input);
  if (op.spends && caller.keyId) await refuseSpentKey(kernel, caller.keyId);
  try {
    // `project` is set whenever the operation declares `project: true`, which is when handlers read it.
    return await op.handler({
      kernel,
      workspace: caller.workspace,
      project: project as Project,
      params,
      query,
      body,
      progress: call.progress,
      signal: call.signal,
      keyId: caller.keyId,
    });
  } catch (e) {
    // A handler's validation failure takes the operation's spec status (400 / 403) unless it chose one.
    if (e instanceof ServiceError && e.code === 'validation_error' && e.status === 422 && op.invalidStatus) {
      throw e.withStatus(op.invalidStatus);
    }
    throw e;
  }
}

/** Runs one call through the pipeline; never throws: every failure comes back mapped, once. */
export async function runCall(kernel: Kernel, call: Call): Promise<Outcome> {
  const { op } = call;
  // Every answer to an admitted caller, failures included, tells its rate budget.
  let rateHeaders: Record<string, string> = {};
  try {
    const caller = await authenticate(kernel, call);
    rateHeaders = await admitCall(kernel, caller.workspace, caller.rateKey);
    const input = await call.input();
    let data: unknown;
    if (input.idempotencyKey && op.method === 'POST') {
      const guarded = parsedOnce(input);
      data = await withIdempotency(kernel, op, caller.workspace, input.idempotencyKey, requestOf(op, guarded), () =>
        execute(kernel, call, caller, guarded),
      );
    } else {
      data = await execute(kernel, call, caller, input);
    }
    const status = op.otherSuccess?.when(data as never) ? op.otherSuccess.status : (op.successStatus ?? 200);
    return { ok: true, status, data, headers: rateHeaders };
  } catch (e) {
    const failure = failureOf(e, call.requestId);
    return { ok: false, failure: { ...failure, headers: { ...rateHeaders, ...failure.headers } } };
  }
}
