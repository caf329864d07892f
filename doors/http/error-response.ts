import { type Failure, failureOf, type Outcome } from '../../core/operations/outcome.ts';

/** A failure as REST answers it: its status, `{"detail": …}` and its headers (Retry-After…). */
export function failureResponse(failure: Failure): Response {
  return Response.json({ detail: failure.detail }, { status: failure.status, headers: failure.headers });
}

/** An outcome of the call pipeline as a REST response. */
export function outcomeResponse(outcome: Outcome): Response {
  return outcome.ok ? Response.json(outcome.data, { status: outcome.status, headers: outcome.headers }) : failureResponse(outcome.failure);
}

/** Any failure outside the pipeline (a route's own check, the app's onError), mapped as the pipeline maps it. */
export function errorResponse(e: unknown, requestId: string): Response {
  return failureResponse(failureOf(e, requestId));
}
