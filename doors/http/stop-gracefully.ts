/**
 * How long a connection may stay silent (seconds): above the longest answer the service may take on
 * purpose (wait_for_project and wait_seconds, ≤ 50 s); Bun's default of 10 s would cut those.
 */
export const IDLE_TIMEOUT_S = 70;

import { log } from '../../core/log.ts';

/** What a listener needs to stop (Bun's Server). */
interface Listener {
  stop(closeActiveConnections?: boolean): Promise<void>;
}

/**
 * Stops a listener as a rolling restart needs (docs/scaling.md): it stops accepting at once (a balancer's
 * next connection goes to another process), idle keep-alive connections close, and requests in
 * flight finish — for up to `graceMs`, after which their connections are cut. Answers whether every
 * request finished in time.
 */
export async function stopGracefully(listener: Listener | undefined, graceMs: number, name: string): Promise<boolean> {
  if (!listener) return true;
  const drained = listener.stop(false).then(() => true);
  const inTime = await Promise.race([drained, Bun.sleep(graceMs).then(() => false)]);
  if (!inTime) {
    log.warn('requests still in flight at the end of the shutdown grace; cutting them', { listener: name, grace_ms: graceMs });
    await listener.stop(true);
  }
  return inTime;
}
