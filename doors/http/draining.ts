import { withHeaders } from './messages.ts';

type Handler = (request: Request) => unknown;

/**
 * While the process drains (SIGTERM, for SHUTDOWN_DELAY_MS), every answer closes its connection.
 * A balancer's keep-alive connections to this process are then closed after a response, never
 * while idle at the moment the process stops accepting: that is the race in which a balancer sends
 * a request on a connection being closed, and cannot replay it elsewhere when it is a POST.
 */
export function closingWhileDraining(lifecycle: { draining: boolean }, fn: Handler): Handler {
  return (request: Request) => {
    const out = fn(request);
    const close = (res: unknown) => (lifecycle.draining && res instanceof Response ? withHeaders(res, { connection: 'close' }) : res);
    return out instanceof Promise ? out.then(close) : close(out);
  };
}
