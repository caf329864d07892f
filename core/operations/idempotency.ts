import { createHash } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import type { AnyOperation } from './operation.ts';

/** Answers worth replaying: successes and client mistakes, not states that may change (402, 409, 429) nor 5xx. */
const REPLAYABLE = (status: number) => status < 400 || (status < 500 && ![402, 409, 429].includes(status));
const WAIT_MS = 10_000;

type Stored = { ok: true; data: unknown } | { ok: false; code: ServiceError['code']; detail: ServiceError['detail'] };

/** What an idempotency key needs of an operation: its name, and the status its success answers. */
type Guarded = Pick<AnyOperation, 'name' | 'successStatus'>;

function requestHash(op: Guarded, input: unknown): string {
  return createHash('sha256')
    .update(op.name)
    .update(JSON.stringify(input) ?? '')
    .digest('hex');
}

function replay(stored: Stored, status: number): unknown {
  if (stored.ok) return stored.data;
  throw new ServiceError(stored.code, stored.detail, { status });
}

/**
 * Runs `execute` at most once per (workspace, key): a retry with the same key and request gets the
 * first answer (and nothing is done or charged twice); the same key with another request is a 422;
 * a retry while the first is still running waits for its answer.
 */
export async function withIdempotency(
  kernel: Kernel,
  op: Guarded,
  workspace: Workspace,
  key: string,
  input: unknown,
  execute: () => Promise<unknown>,
): Promise<unknown> {
  if (key.length > 191) throw new ServiceError('validation_error', { message: 'Idempotency-Key is longer than 191 characters' });
  const repo = kernel.storage.idempotency;
  const hash = requestHash(op, input);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const claim = await repo.claim(workspace.id, key, op.name, hash);
    if (claim.state === 'mismatch') {
      throw new ServiceError('validation_error', {
        message: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
      });
    }
    if (claim.state === 'done') return replay(claim.response as Stored, claim.status);
    if (claim.state === 'claimed') break;
    if (Date.now() > deadline) {
      throw new ServiceError('conflict', 'A request with this Idempotency-Key is still running; retry shortly');
    }
    await Bun.sleep(50);
  }
  try {
    const data = await execute();
    await repo.complete(workspace.id, key, op.successStatus ?? 200, { ok: true, data } satisfies Stored);
    return data;
  } catch (e) {
    if (e instanceof ServiceError && REPLAYABLE(e.status)) {
      await repo.complete(workspace.id, key, e.status, { ok: false, code: e.code, detail: e.detail } satisfies Stored);
    } else {
      await repo.release(workspace.id, key);
    }
    throw e;
  }
}
