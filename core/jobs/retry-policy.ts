import { Value } from '@sinclair/typebox/value';
import type { DeadReason, Job, JobHandler, JobHandlers, JobRegistration, QueueOptions } from '../ports/queue.ts';

/**
 * What happens after a failed attempt, shared by every queue implementation so they behave alike:
 * exponential backoff with jitter for retryable failures, the dead letter at once for permanent ones,
 * the dead letter after `maxAttempts`.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
  /** 0..1: the delay is drawn uniformly from [exp * (1 - jitter), exp]. */
  jitter: number;
  /** The longest wait a failure's `retryAfterMs` may ask for (JOB_MAX_RETRY_DELAY_MS). */
  maxRetryDelayMs: number;
  /** 0 = no time limit. */
  jobTimeoutMs: number;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_JOB_TIMEOUT_MS = 15 * 60_000;
/** JOB_MAX_RETRY_DELAY_MS: a provider's Retry-After holds a retry back at most this long. */
export const DEFAULT_MAX_RETRY_DELAY_MS = 10 * 60_000;
/** A Retry-After wait is drawn from [wait, wait * (1 + RETRY_AFTER_SPREAD)], so rows told together do not come back together. */
export const RETRY_AFTER_SPREAD = 0.2;

export function retryPolicy(options: QueueOptions): RetryPolicy {
  return {
    maxAttempts: Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS),
    baseMs: Math.max(0, options.backoff?.baseMs ?? 1000),
    maxMs: Math.max(0, options.backoff?.maxMs ?? 60_000),
    jitter: Math.min(1, Math.max(0, options.backoff?.jitter ?? 0.5)),
    maxRetryDelayMs: Math.max(0, options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS),
    jobTimeoutMs: Math.max(0, options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS),
  };
}

/** Delay before attempt `failedAttempt + 1`: base * 2^(failedAttempt-1), capped at maxMs, minus jitter. */
export function backoffDelay(failedAttempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.round(exp * (1 - policy.jitter * random()));
}

export type AttemptOutcome =
  | { kind: 'done' }
  | { kind: 'retry'; delayMs: number; error: string }
  | { kind: 'dead'; reason: DeadReason; error: string };

const MAX_ERROR_CHARS = 2000;

export function errorMessage(e: unknown): string {
  const text = e instanceof Error ? e.message || e.name : String(e);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}

/** `retryable: false` is permanent; `retryable: true` or no flag is retried (as BullMQ does). */
export function isRetryable(e: unknown): boolean {
  return !(typeof e === 'object' && e !== null && (e as { retryable?: unknown }).retryable === false);
}

function retryAfterMs(e: unknown): number {
  const v = typeof e === 'object' && e !== null ? (e as { retryAfterMs?: unknown }).retryAfterMs : undefined;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/**
 * The wait a failure's `retryAfterMs` asks for (0: none), with up to RETRY_AFTER_SPREAD more drawn
 * at random, never past `maxRetryDelayMs`.
 */
export function retryAfterDelay(e: unknown, policy: Pick<RetryPolicy, 'maxRetryDelayMs'>, random: () => number = Math.random): number {
  const asked = retryAfterMs(e);
  if (asked === 0) return 0;
  return Math.round(Math.min(policy.maxRetryDelayMs, asked * (1 + RETRY_AFTER_SPREAD * random())));
}

/**
 * Decides what a failure of attempt `attempt` leads to. A retry waits the backoff, or the failure's
 * `retryAfterMs` (a provider's Retry-After, capped and spread: retryAfterDelay) when that is longer.
 */
export function outcomeOfFailure(e: unknown, attempt: number, policy: RetryPolicy, random?: () => number): AttemptOutcome {
  const error = errorMessage(e);
  if (!isRetryable(e)) return { kind: 'dead', reason: 'permanent_error', error };
  if (attempt >= policy.maxAttempts) return { kind: 'dead', reason: 'max_attempts', error };
  return { kind: 'retry', delayMs: Math.max(backoffDelay(attempt, policy, random), retryAfterDelay(e, policy, random)), error };
}

export class JobTimeoutError extends Error {
  readonly retryable = true;
  constructor(ms: number) {
    super(`job timed out after ${ms} ms`);
    this.name = 'JobTimeoutError';
  }
}

function registrationOf(handlers: JobHandlers, type: string): JobRegistration | undefined {
  const h = handlers[type];
  if (h === undefined) return undefined;
  return typeof h === 'function' ? { handler: h as JobHandler } : h;
}

/**
 * Runs one attempt of a job: checks there is a handler and that the payload fits its schema, then
 * runs the handler under `jobTimeoutMs`. `controller` is the caller's, so that it can also abort
 * the attempt (shutdown, lost lease); a timeout aborts it with a JobTimeoutError.
 */
export async function runAttempt(
  handlers: JobHandlers,
  job: Job,
  ctx: { workerId: string; controller: AbortController },
  policy: RetryPolicy,
): Promise<AttemptOutcome> {
  const reg = registrationOf(handlers, job.type);
  if (!reg) return { kind: 'dead', reason: 'no_handler', error: `no handler for job type "${job.type}"` };
  if (reg.payloadSchema && !Value.Check(reg.payloadSchema, job.payload)) {
    const problems = [...Value.Errors(reg.payloadSchema, job.payload)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
    return { kind: 'dead', reason: 'invalid_payload', error: `invalid payload: ${problems.join('; ')}` };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    if (policy.jobTimeoutMs <= 0) return;
    timer = setTimeout(() => {
      const err = new JobTimeoutError(policy.jobTimeoutMs);
      ctx.controller.abort(err);
      reject(err);
    }, policy.jobTimeoutMs);
  });
  try {
    await Promise.race([
      reg.handler(job, { signal: ctx.controller.signal, workerId: ctx.workerId, lastAttempt: job.attempt >= policy.maxAttempts }),
      timedOut,
    ]);
    return { kind: 'done' };
  } catch (e) {
    return outcomeOfFailure(e, job.attempt, policy);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
