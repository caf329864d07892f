import { setTimeout as sleep } from 'node:timers/promises';
import { type PluginContext, type ProviderRequest, providerRequest, type SafeResponse, statusError } from 'workflow-service/plugin-sdk';

/**
 * How long a CRM asks us to wait before sending again, read from its answer: undefined when the
 * answer is not a throttle, Infinity when waiting inside the row cannot help (a daily allowance).
 */
export type ThrottleWait = (res: SafeResponse) => number | undefined;

/** The answer's Retry-After in ms (seconds or an HTTP date), read by the SDK's own parser. */
export const retryAfterMs = (res: SafeResponse): number | undefined => statusError(res).retryAfterMs;

/** A throttle wait the row waits out itself; longer ones go back to the host, which retries the rows later. */
export const MAX_WAIT_MS = 10_000;
const TRIES = 3;

/**
 * Sends one request; when the CRM answers with a throttle whose wait fits MAX_WAIT_MS, waits it out
 * (cut short by the job's signal) and sends again, up to TRIES times. The host's rate budget paces
 * rows before they start, but the CRM's allowance is shared with every other app of the account, so
 * a throttle can still come. Answers the last response whatever its status: the caller turns a
 * remaining 429 into a retryable error, which puts the row back in the queue.
 */
export async function sendPaced(ctx: PluginContext, url: string, init: ProviderRequest, waitOf: ThrottleWait): Promise<SafeResponse> {
  for (let attempt = 1; ; attempt++) {
    const res = await providerRequest(ctx, url, init);
    const wait = waitOf(res);
    if (wait === undefined || wait > MAX_WAIT_MS || attempt >= TRIES) return res;
    ctx.log('CRM throttled the request; waiting as it asked', { status: res.status, wait_ms: wait, attempt });
    await sleep(wait, undefined, { signal: ctx.signal });
  }
}
