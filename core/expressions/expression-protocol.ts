/** Messages between the expression pool (host thread) and its sandbox workers. */

/** Limits one evaluation runs under inside the sandbox. */
export interface EvaluationLimits {
  /** Wall time of one evaluation (FORMULA_TIMEOUT_MS). */
  timeoutMs: number;
  /** Nesting of function calls and sub-expressions (recursion). */
  depth: number;
  /** Items one sequence (a range, a mapped array) may hold. */
  sequence: number;
  /** Bytes of the JSON of one result. */
  resultBytes: number;
}

/** Host → worker: evaluate one expression over each input, in order. */
export interface EvaluateRequest {
  task: number;
  expression: string;
  inputs: unknown[];
  bindings: Record<string, unknown> | undefined;
  limits: EvaluationLimits;
}

/**
 * An EvaluateRequest as JSON text: inputs are JSON values (rows, response bodies), and a string
 * crosses to the thread for far less than the structured clone of the same objects. A request with
 * an `undefined` input (which JSON cannot carry) goes as the object itself.
 */
export type EncodedRequest = string;

/**
 * The outcome of one input. `bound`: the evaluation was stopped by a limit (time, memory, depth,
 * sequence size, the regex engine's backtracking) rather than failing on its own terms.
 */
export type ExpressionOutcome = { ok: true; value: unknown } | { ok: false; error: string; bound?: true };

/**
 * Worker → host: outcomes of consecutive inputs from `from` on, sent every few milliseconds of work
 * (one message per input would cost more than a short formula does).
 */
export interface EvaluateReply {
  task: number;
  from: number;
  outcomes: ExpressionOutcome[];
}

/** An EvaluateReply as JSON text (the worker has each value's JSON already, for the size bound). */
export type EncodedReply = string;

/**
 * Host → worker, once: a shared cell where the worker writes the index of the input it is on, so a
 * host that must stop it knows which input ran over and which ones only wait to be reported.
 */
export interface WorkerInit {
  progress: SharedArrayBuffer;
}
