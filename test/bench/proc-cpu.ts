import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds of processes and of the whole machine, read from /proc (Linux; zeros elsewhere). */

const TICKS_PER_SECOND = 100;

/** user + system CPU seconds a process has used so far (0 once it is gone). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name "(...)": state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of the machine (all cores) so far: busy (running anything here), steal (a virtual
 * machine's cores taken by its host: work here that did not run), and total.
 */
export function machineCpuSeconds(): { busy: number; steal: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    // user nice system idle iowait irq softirq steal (guest time is already inside user)
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const steal = v[7] ?? 0;
    return { busy: (total - idle - steal) / TICKS_PER_SECOND, steal: steal / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return { busy: 0, steal: 0, total: 0 };
  }
}

/** The pid of a server process whose command line holds every one of `needles` (e.g. "mariadbd", "--port=1234"). */
export function findPid(needles: string[]): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (needles.every((n) => cmd.includes(n))) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** CPU seconds each named process used between two snapshots, and how busy the machine was. */
export class CpuMeter {
  private start = new Map<string, number>();
  private machine = machineCpuSeconds();
  constructor(private readonly pids: Record<string, number | undefined>) {
    this.reset();
  }
  reset(): void {
    this.start = new Map(Object.entries(this.pids).map(([name, pid]) => [name, pid ? processCpuSeconds(pid) : 0]));
    this.machine = machineCpuSeconds();
  }
  /**
   * Seconds of CPU per process since reset, `machineBusy` (share of all cores, 0..1), `others`:
   * busy CPU seconds of the machine not spent by the named processes (another job on the machine),
   * and `steal`: CPU seconds the virtual machine's host took away.
   */
  read(): { perProcess: Record<string, number>; machineBusy: number; others: number; steal: number } {
    const perProcess: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) perProcess[name] = pid ? processCpuSeconds(pid) - (this.start.get(name) ?? 0) : 0;
    const now = machineCpuSeconds();
    const total = now.total - this.machine.total;
    const busy = now.busy - this.machine.busy;
    const ours = Object.values(perProcess).reduce((a, b) => a + b, 0);
    return {
      perProcess,
      machineBusy: total > 0 ? busy / total : 0,
      others: Math.max(0, busy - ours),
      steal: now.steal - this.machine.steal,
    };
  }
}
