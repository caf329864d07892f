/**
 * A sandbox thread for tenant JSONata: the host terminates it when an evaluation runs over its time
 * or memory bound (a regex can backtrack for hours inside one step, where JSONata's own guardrails
 * never get a say), so nothing a tenant writes can stall the thread that serves requests.
 */
import jsonata from 'jsonata';
import { describeFailure, isBoundFailure } from './expression-errors.ts';
import type {
  EncodedReply,
  EncodedRequest,
  EvaluateRequest,
  EvaluationLimits,
  ExpressionOutcome,
  WorkerInit,
} from './expression-protocol.ts';
import { LinearRegExp } from './linear-regex.ts';

declare const self: Worker;

/** Outcomes are sent at least this often while a task runs (the host's sign of life). */
const FLUSH_MS = 5;

const compiled = new Map<string, ReturnType<typeof jsonata>>();
let progress: Int32Array<ArrayBufferLike> = new Int32Array(1);

function compile(expression: string, limits: EvaluationLimits): ReturnType<typeof jsonata> {
  const key = `${limits.timeoutMs}:${limits.depth}:${limits.sequence}:${expression}`;
  let c = compiled.get(key);
  if (!c) {
    if (compiled.size > 500) compiled.clear();
    c = jsonata(expression, {
      timeout: limits.timeoutMs,
      stack: limits.depth,
      sequence: limits.sequence,
      // Regexes that never give up silently (linear-regex.ts): a stopped match is an error, not "no match".
      RegexEngine: LinearRegExp as unknown as RegExpConstructor,
    });
    compiled.set(key, c);
  }
  return c;
}

/** JSONata answers a function (`function($x){…}`) as an object holding its closure. */
const isFunction = (v: unknown) =>
  typeof v === 'function' || (typeof v === 'object' && v !== null && ('_jsonata_lambda' in v || '_jsonata_function' in v));

/**
 * An outcome as the JSON text of an ExpressionOutcome: a value only as JSON can carry it (a function
 * is no value), within the size bound. Replies travel as text: the value is JSON already (for the
 * size bound), and a string crosses threads for much less than a cloned object.
 */
function portable(value: unknown, limits: EvaluationLimits): string {
  if (value === undefined || isFunction(value)) return '{"ok":true}';
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    return failed({ ok: false, error: `expression result cannot be stored as JSON (${(e as Error).message})` });
  }
  if (json === undefined) return '{"ok":true}';
  if (json.length > limits.resultBytes) {
    return failed({ ok: false, error: `expression result is ${json.length} bytes, over the ${limits.resultBytes}-byte limit of a cell` });
  }
  return `{"ok":true,"value":${json}}`;
}

const failed = (outcome: ExpressionOutcome & { ok: false }): string => JSON.stringify(outcome);

async function run({ task, expression, inputs, bindings, limits }: EvaluateRequest): Promise<void> {
  let expr: ReturnType<typeof jsonata> | undefined;
  let compileError: ExpressionOutcome | undefined;
  try {
    expr = compile(expression, limits);
  } catch (e) {
    compileError = { ok: false, error: describeFailure(e, limits) };
  }
  let batch: string[] = [];
  let from = 0;
  let flushedAt = performance.now();
  for (let index = 0; index < inputs.length; index++) {
    Atomics.store(progress, 0, index);
    let outcome: string;
    if (!expr) outcome = JSON.stringify(compileError);
    else {
      try {
        outcome = portable(await expr.evaluate(inputs[index], bindings), limits);
      } catch (e) {
        outcome = failed(
          isBoundFailure(e)
            ? { ok: false, error: describeFailure(e, limits), bound: true }
            : { ok: false, error: describeFailure(e, limits) },
        );
      }
    }
    batch.push(outcome);
    const now = performance.now();
    if (now - flushedAt >= FLUSH_MS || index === inputs.length - 1) {
      self.postMessage(`{"task":${task},"from":${from},"outcomes":[${batch.join(',')}]}` satisfies EncodedReply);
      from = index + 1;
      batch = [];
      flushedAt = now;
    }
  }
}

self.onmessage = (event: MessageEvent<EncodedRequest | EvaluateRequest | WorkerInit>) => {
  const data = event.data;
  if (typeof data === 'string') void run(JSON.parse(data) as EvaluateRequest);
  else if ('progress' in data) progress = new Int32Array(data.progress);
  else void run(data);
};
