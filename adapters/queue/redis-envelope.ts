import type { DeadJob, DeadReason, Job } from '../../core/ports/queue.ts';

/** What the Redis Streams queue stores per job: the envelope in a stream entry, and its dead-letter fields. */

/** What a stream entry and a `delayed` member hold. */
export interface Envelope {
  id: string;
  type: string;
  payload: unknown;
  /** Attempt number of the first delivery of this entry. */
  attempt: number;
  enqueuedAt: number;
  lastError?: string;
  /** The workspace it works for (fair shares, core/jobs/fair-share.ts). */
  tenant?: string;
}

export interface Running {
  entryId: string;
  job: Job;
  env: Envelope;
  controller: AbortController;
  /** Set when the entry turns out to be owned by another consumer: we must not settle it. */
  lost: boolean;
  /** Its ack/retry/dead-letter is on the way: a heartbeat finding it gone is no news. */
  settling: boolean;
}

export function parseEnvelope(json: string | undefined): Envelope | undefined {
  if (json === undefined) return undefined;
  try {
    const v = JSON.parse(json) as Partial<Envelope>;
    if (typeof v.id !== 'string' || typeof v.type !== 'string' || typeof v.attempt !== 'number') return undefined;
    return {
      id: v.id,
      type: v.type,
      payload: v.payload ?? null,
      attempt: v.attempt,
      enqueuedAt: Number(v.enqueuedAt) || 0,
      lastError: v.lastError,
      ...(typeof v.tenant === 'string' ? { tenant: v.tenant } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Field list [k, v, k, v...] → value of `name`. */
export function field(fields: unknown, name: string): string | undefined {
  if (!Array.isArray(fields)) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return String(fields[i + 1]);
  return undefined;
}

export type StreamEntry = [id: string, fields: string[]];

/** The fields of a dead-letter entry: what jobs:dead lists, and the envelope a re-drive starts again from. */
export function deadFields(run: Running, reason: DeadReason, error: string, workerId: string): string[] {
  const { job, env } = run;
  const stored: Envelope = { ...env, attempt: job.attempt, lastError: error };
  return [
    'id',
    job.id,
    'type',
    job.type,
    'reason',
    reason,
    'error',
    error,
    'attempts',
    String(job.attempt),
    'failed_at',
    String(Date.now()),
    'worker',
    workerId,
    'job',
    JSON.stringify(stored),
  ];
}

export function toDeadJob(fields: string[]): DeadJob {
  const env = parseEnvelope(field(fields, 'job'));
  return {
    id: field(fields, 'id') ?? env?.id ?? '',
    type: field(fields, 'type') ?? env?.type ?? '',
    payload: env?.payload ?? null,
    attempts: Number(field(fields, 'attempts') ?? 0),
    reason: (field(fields, 'reason') ?? 'permanent_error') as DeadReason,
    error: field(fields, 'error') ?? '',
    enqueuedAt: env?.enqueuedAt ?? 0,
    failedAt: Number(field(fields, 'failed_at') ?? 0),
    worker: field(fields, 'worker') ?? '',
    ...(env?.tenant ? { tenant: env.tenant } : {}),
  };
}
