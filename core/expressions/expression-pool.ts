import type { Config } from '../config.ts';
import { log } from '../log.ts';
import { ranOver } from './expression-errors.ts';
import type {
  EncodedReply,
  EncodedRequest,
  EvaluateReply,
  EvaluateRequest,
  EvaluationLimits,
  ExpressionOutcome,
  WorkerInit,
} from './expression-protocol.ts';

export type { ExpressionOutcome } from './expression-protocol.ts';

/** What the kernel and plugins use to evaluate tenant JSONata (formulas, run conditions, extracts). */
export interface Expressions {
  /** One expression over many inputs (rows), one outcome each, in order. */
  /** `signal` (the host passes the job's): once aborted, the inputs not yet answered fail at once and their threads are freed. */
  evaluateMany(
    expression: string,
    inputs: unknown[],
    bindings?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ExpressionOutcome[]>;
  evaluate(expression: string, input: unknown, bindings?: Record<string, unknown>): Promise<ExpressionOutcome>;
}

export interface ExpressionPoolOptions {
  /** Sandbox threads (EXPRESSION_WORKERS). */
  workers: number;
  /** Time bound of one evaluation (FORMULA_TIMEOUT_MS). */
  timeoutMs: number;
  /** Growth of this process's memory, while expressions run, past which they are stopped (EXPRESSION_MAX_MEMORY_MB). */
  maxMemoryBytes: number;
  /** Bytes of one result's JSON (MAX_CELL_BYTES: a result is a cell). */
  maxResultBytes: number;
}

/** Recursion bound: deep enough for real formulas, far below what exhausts a thread's stack. */
const DEPTH = 500;
/** Items one sequence may hold; JSONata's own range cap (10^7) lets four ranges take gigabytes. */
const SEQUENCE = 100_000;
/** Inputs sent to a thread at once; callers take turns chunk by chunk, so one big batch cannot starve the rest. */
const CHUNK = 100;
/** How often memory is sampled while an evaluation runs. */
const MEMORY_SAMPLE_MS = 50;
/**
 * Inputs in a row stopped by a limit after which a call gives up: its other inputs fail at once with
 * the same reason, so one hostile column costs a few seconds of a thread per batch, not hours.
 */
export const BOUND_STOPS_IN_A_ROW = 3;

interface Call {
  expression: string;
  inputs: unknown[];
  bindings: Record<string, unknown> | undefined;
  outcomes: ExpressionOutcome[];
  /** Next input never sent; `requeued` holds ranges handed back by a stopped thread. */
  cursor: number;
  requeued: [number, number][];
  left: number;
  /** Outcomes in a row, as they arrived, that a limit stopped (see BOUND_STOPS_IN_A_ROW). */
  boundStops: number;
  gaveUp: boolean;
  resolve(outcomes: ExpressionOutcome[]): void;
  reject(e: Error): void;
}

interface Running {
  call: Call;
  task: number;
  from: number;
  to: number;
  /** Outcomes received so far (inputs from `from` to `from + received`). */
  received: number;
  /** Run alone, after a memory stop: growth past the bound now is this input's. */
  alone: boolean;
  deadline: ReturnType<typeof setTimeout>;
}

interface Slot {
  worker: Worker | undefined;
  /** The index (within the task) of the input the worker is on, written by that worker (one cell per worker). */
  progress: Int32Array;
  running?: Running;
}

/** An error that means "try the job again later" (the pool closed under it). */
class PoolClosedError extends Error {
  readonly retryable = true;
}

/**
 * A pool of sandbox threads for tenant JSONata. JSONata's own guardrails (time, depth, sequence size)
 * end most runaway expressions inside the thread; the host also holds a deadline per input and a
 * bound on memory growth, and terminates the thread (replacing it) when either is passed, so that
 * an endless regex or a huge allocation ends that cell as `error` and nothing else notices.
 */
export class ExpressionPool implements Expressions {
  private readonly slots: Slot[];
  private readonly waiting: Call[] = [];
  /** Inputs that were running when memory passed its bound: each runs again alone, to find the cause. */
  private readonly suspects: { call: Call; index: number }[] = [];
  private readonly limits: EvaluationLimits;
  private nextTask = 1;
  private memoryTimer: ReturnType<typeof setInterval> | undefined;
  private memoryBaseline = 0;
  private closed = false;
  /** Threads terminated because an evaluation passed the host's time or memory bound. */
  stoppedThreads = 0;
  /** Inputs failed without running because their call kept running into a limit (BOUND_STOPS_IN_A_ROW). */
  skippedInputs = 0;

  constructor(private readonly options: ExpressionPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, options.workers) }, () => ({
      worker: undefined,
      progress: new Int32Array(new SharedArrayBuffer(4)),
    }));
    this.limits = { timeoutMs: options.timeoutMs, depth: DEPTH, sequence: SEQUENCE, resultBytes: options.maxResultBytes };
  }

  evaluateMany(
    expression: string,
    inputs: unknown[],
    bindings?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ExpressionOutcome[]> {
    if (this.closed) return Promise.reject(new PoolClosedError('the expression pool is closed (the service is stopping)'));
    if (inputs.length === 0) return Promise.resolve([]);
    const stopped = (): ExpressionOutcome => ({
      ok: false,
      error: `stopped: ${(signal?.reason as Error | undefined)?.message ?? 'the job was stopped'}`,
    });
    if (signal?.aborted) return Promise.resolve(inputs.map(stopped));
    return new Promise((resolve, reject) => {
      const call: Call = {
        expression,
        inputs,
        bindings,
        outcomes: new Array(inputs.length),
        cursor: 0,
        requeued: [],
        left: inputs.length,
        boundStops: 0,
        gaveUp: false,
        resolve,
        reject,
      };
      if (signal) {
        // A deleted project (or a job stopped otherwise) frees its threads now, not after its inputs.
        const onAbort = () => this.giveUp(call, stopped());
        signal.addEventListener('abort', onAbort, { once: true });
        call.resolve = (outcomes) => {
          signal.removeEventListener('abort', onAbort);
          resolve(outcomes);
        };
      }
      this.waiting.push(call);
      this.pump();
    });
  }

  async evaluate(expression: string, input: unknown, bindings?: Record<string, unknown>): Promise<ExpressionOutcome> {
    return (await this.evaluateMany(expression, [input], bindings))[0] as ExpressionOutcome;
  }

  /** Stops every thread; calls still waiting fail with a retryable error. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new PoolClosedError('the expression pool is closed (the service is stopping)');
    const calls = new Set<Call>([...this.waiting.splice(0), ...this.suspects.splice(0).map((s) => s.call)]);
    for (const slot of this.slots) {
      if (slot.running) {
        clearTimeout(slot.running.deadline);
        calls.add(slot.running.call);
        slot.running = undefined;
      }
      slot.worker?.terminate();
      slot.worker = undefined;
    }
    for (const call of calls) call.reject(error);
    this.watchMemory();
  }

  private pump(): void {
    if (!this.closed && this.suspects.length > 0) {
      // A suspect runs alone: wait until every thread is idle, then run it by itself.
      const slot = this.slots[0] as Slot;
      if (this.slots.every((s) => !s.running)) {
        const { call, index } = this.suspects.shift() as { call: Call; index: number };
        this.start(slot, call, index, index + 1, true);
      }
      this.watchMemory();
      return;
    }
    // While a suspect runs alone, nothing else starts.
    const isolating = this.slots.some((s) => s.running?.alone);
    for (const slot of isolating ? [] : this.slots) {
      if (this.closed || this.waiting.length === 0) break;
      if (slot.running) continue;
      const call = this.waiting[0] as Call;
      const range = call.requeued.shift() ?? [call.cursor, Math.min(call.cursor + CHUNK, call.inputs.length)];
      if (range[0] === call.cursor) call.cursor = range[1];
      // Take turns: a call with more to send goes to the back of the line.
      this.waiting.shift();
      if (call.requeued.length > 0 || call.cursor < call.inputs.length) this.waiting.push(call);
      this.start(slot, call, range[0], range[1]);
    }
    this.watchMemory();
  }

  private start(slot: Slot, call: Call, from: number, to: number, alone = false): void {
    const worker = slot.worker ?? this.spawn(slot);
    const task = this.nextTask++;
    Atomics.store(slot.progress, 0, 0);
    slot.running = { call, task, from, to, received: 0, alone, deadline: this.deadline(slot, task) };
    const request: EvaluateRequest = {
      task,
      expression: call.expression,
      inputs: call.inputs.slice(from, to),
      bindings: call.bindings,
      limits: this.limits,
    };
    worker.postMessage(request.inputs.includes(undefined) ? request : (JSON.stringify(request) satisfies EncodedRequest));
  }

  private spawn(slot: Slot): Worker {
    // ref: false: idle sandbox threads never keep the process alive.
    const worker = new Worker(new URL('./expression-worker.ts', import.meta.url).href, { ref: false } as WorkerOptions);
    // A terminated thread may still write its progress for a moment: each thread gets a cell of its own.
    slot.progress = new Int32Array(new SharedArrayBuffer(4));
    // Events of a thread already replaced (a late reply, a late error) are not about the slot's task.
    worker.onmessage = (event: MessageEvent<EncodedReply>) => {
      if (slot.worker === worker) this.reply(slot, JSON.parse(event.data) as EvaluateReply);
    };
    worker.onerror = (event) => {
      if (slot.worker === worker) this.stop(slot, `expression sandbox failed: ${(event as ErrorEvent).message ?? 'unknown error'}`);
    };
    worker.postMessage({ progress: slot.progress.buffer as SharedArrayBuffer } satisfies WorkerInit);
    slot.worker = worker;
    return worker;
  }

  /** The host's own bound: the thread's guardrail should have answered well before it. */
  private deadline(slot: Slot, task: number): ReturnType<typeof setTimeout> {
    const ms = this.options.timeoutMs + Math.max(250, this.options.timeoutMs);
    const timer = setTimeout(() => {
      if (slot.running?.task === task) this.stop(slot, ranOver(this.options));
    }, ms);
    timer.unref();
    return timer;
  }

  private reply(slot: Slot, message: EvaluateReply): void {
    const running = slot.running;
    if (!running || running.task !== message.task) return; // a late reply from a stopped task
    clearTimeout(running.deadline);
    for (const [i, outcome] of message.outcomes.entries()) this.settle(running.call, running.from + message.from + i, outcome);
    running.received = message.from + message.outcomes.length;
    if (running.from + running.received >= running.to) {
      slot.running = undefined;
      this.pump();
    } else {
      running.deadline = this.deadline(slot, running.task);
    }
  }

  private settle(call: Call, index: number, outcome: ExpressionOutcome): void {
    if (call.outcomes[index] !== undefined) return; // each input is answered once
    call.outcomes[index] = outcome;
    call.left -= 1;
    if (call.left === 0) {
      call.resolve(call.outcomes);
      return;
    }
    if (call.gaveUp) return;
    call.boundStops = !outcome.ok && outcome.bound ? call.boundStops + 1 : 0;
    if (call.boundStops >= BOUND_STOPS_IN_A_ROW) this.giveUp(call, outcome);
  }

  /**
   * A call whose inputs keep running into a limit: the rest fail now with the same reason (a bound
   * reached on every row before it says nothing good of the next), and its threads are freed.
   */
  private giveUp(call: Call, outcome: ExpressionOutcome): void {
    call.gaveUp = true;
    log.warn('expression stopped early', { reason: (outcome as { error: string }).error, expression: call.expression.slice(0, 200) });
    const at = this.waiting.indexOf(call);
    if (at >= 0) this.waiting.splice(at, 1);
    for (let i = this.suspects.length - 1; i >= 0; i--) if (this.suspects[i]?.call === call) this.suspects.splice(i, 1);
    call.requeued = [];
    call.cursor = call.inputs.length;
    for (const slot of this.slots) {
      if (slot.running?.call !== call) continue;
      clearTimeout(slot.running.deadline);
      slot.worker?.terminate();
      slot.worker = undefined;
      slot.running = undefined;
      this.stoppedThreads += 1;
    }
    for (let i = 0; i < call.inputs.length; i++) {
      if (call.outcomes[i] !== undefined) continue;
      this.skippedInputs += 1;
      this.settle(call, i, outcome);
    }
    queueMicrotask(() => this.pump());
  }

  /**
   * Terminates a thread that ran over: the input it was on fails with `reason` (or, with `suspect`,
   * goes to run again alone); the inputs it had finished but not reported yet, and those after it,
   * go back in line for a fresh thread.
   */
  private stop(slot: Slot, reason: string, o: { suspect?: boolean; pump?: boolean } = {}): void {
    const running = slot.running;
    const progress = Atomics.load(slot.progress, 0);
    slot.worker?.terminate();
    slot.worker = undefined;
    slot.running = undefined;
    this.stoppedThreads += 1;
    if (running) {
      clearTimeout(running.deadline);
      const reported = running.from + running.received;
      const at = Math.min(running.to - 1, Math.max(reported, running.from + progress));
      log.warn('expression stopped', { reason, suspect: Boolean(o.suspect), expression: running.call.expression.slice(0, 200) });
      const again: [number, number][] = [];
      if (reported < at) again.push([reported, at]);
      if (at + 1 < running.to) again.push([at + 1, running.to]);
      if (again.length) {
        running.call.requeued.push(...again);
        if (!this.waiting.includes(running.call)) this.waiting.unshift(running.call);
      }
      if (o.suspect) this.suspects.push({ call: running.call, index: at });
      else this.settle(running.call, at, { ok: false, error: reason, bound: true });
    }
    if (o.pump ?? true) this.pump();
  }

  /**
   * Memory passed its bound. The growth is the process's, so when several inputs ran, none is known
   * to be the cause: each is stopped and runs again alone. An input running alone is the cause.
   */
  private stopForMemory(): void {
    const reason = `expression used more than ${Math.round(this.options.maxMemoryBytes / 1048576)} MB of memory`;
    const running = this.slots.filter((s) => s.running);
    const alone = running.length === 1 && running[0]?.running?.alone === true;
    for (const slot of running) this.stop(slot, reason, { suspect: !alone, pump: false });
    this.pump();
  }

  /** Samples memory while anything runs; growth past the bound stops every running evaluation. */
  private watchMemory(): void {
    const busy = this.slots.some((s) => s.running);
    if (!busy || this.closed) {
      if (this.memoryTimer) clearInterval(this.memoryTimer);
      this.memoryTimer = undefined;
      return;
    }
    if (this.memoryTimer) return;
    this.memoryBaseline = process.memoryUsage.rss();
    this.memoryTimer = setInterval(() => {
      const rss = process.memoryUsage.rss();
      // A baseline that falls with the process (a collection ran) keeps the bound honest.
      this.memoryBaseline = Math.min(this.memoryBaseline, rss);
      if (rss - this.memoryBaseline <= this.options.maxMemoryBytes) return;
      // The stopped threads' memory is returned over the next moments: start the next bound from there.
      this.memoryBaseline = Number.POSITIVE_INFINITY;
      this.stopForMemory();
    }, MEMORY_SAMPLE_MS);
    this.memoryTimer.unref();
  }
}

/** The pool a configuration asks for (results are cells, so they share the cell bound). */
export function openExpressionPool(config: Pick<Config, 'expressions' | 'limits'>): ExpressionPool {
  return new ExpressionPool({
    workers: config.expressions.workers,
    timeoutMs: config.expressions.timeoutMs,
    maxMemoryBytes: config.expressions.maxMemoryMb * 1_048_576,
    maxResultBytes: config.limits.cellBytes,
  });
}
