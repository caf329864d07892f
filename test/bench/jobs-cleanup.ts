import type { Subprocess } from 'bun';

/**
 * Clean-up for the jobs bench: the processes it spawned (only those), and stop steps (servers,
 * connections) run newest first, each even when an earlier one fails or hangs (15 s each).
 */

const live = new Set<Subprocess>();

export function track<P extends Subprocess>(proc: P): P {
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  return proc;
}

export async function killChildren(): Promise<void> {
  const procs = [...live];
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}

export class CleanupSteps {
  private steps: (() => Promise<void> | void)[] = [];
  private running: Promise<void> | undefined;
  add(step: () => Promise<void> | void): void {
    this.steps.push(step);
  }
  /** Runs the steps once; a second caller (a signal during the normal clean-up) waits for the same run. */
  run(): Promise<void> {
    this.running ??= this.runSteps();
    return this.running;
  }
  private async runSteps(): Promise<void> {
    // Steps added while cleaning up (a server that finished starting meanwhile) are run too.
    for (let steps = this.steps.splice(0).reverse(); steps.length; steps = this.steps.splice(0).reverse()) await this.runEach(steps);
  }
  private async runEach(steps: (() => Promise<void> | void)[]): Promise<void> {
    for (const step of steps) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out after 15 s')), 15_000);
        });
        await Promise.race([Promise.resolve().then(step), timeout]);
      } catch (e) {
        process.stderr.write(`cleanup step failed: ${(e as Error).message}\n`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
