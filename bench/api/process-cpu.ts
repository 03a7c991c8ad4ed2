import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (100 on Linux almost everywhere; asked once). */
let ticksPerSecond: number | null = null;
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

/** CPU time (user + system, ms) a process has used so far, from /proc; null where there is no /proc. */
export function processCpuMs(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces, hence the last ')'): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
  } catch {
    return null;
  }
}

/** Starts counting the CPU of some processes; `perRequest(n)` gives each one's ms per request (null: not measurable). */
export function cpuMeter(pids: Record<string, number | undefined>): { perRequest(requests: number): Record<string, number | null> } {
  const start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid === undefined ? null : processCpuMs(pid)]));
  return {
    perRequest(requests) {
      return Object.fromEntries(
        Object.entries(pids).map(([name, pid]) => {
          const before = start[name];
          const after = pid === undefined ? null : processCpuMs(pid);
          return [name, before === null || before === undefined || after === null || requests === 0 ? null : (after - before) / requests];
        }),
      );
    },
  };
}
