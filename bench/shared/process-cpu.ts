/**
 * CPU time of the native stack's processes (PostgreSQL with every child of its postmaster, Kafka,
 * Kafka Connect, the schema registry) and of this process, from /proc: what each stage of the
 * pipeline spends, so a benchmark can say which process holds the two cores. PostgreSQL's backends
 * count after they exit too (the postmaster's reaped-children time); for the JVMs, their own pid.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const STACK_PROCESSES = ['postgres', 'kafka', 'connect', 'registry'] as const;
export type StackProcess = (typeof STACK_PROCESSES)[number];
/** `bench` is this Node process (the ingest worker runs in it, with its apply thread). */
export type CpuSample = Record<StackProcess | 'bench', number>;

// Linux reports utime/stime in clock ticks; 100 per second on every kernel built with the default USER_HZ.
const TICKS_PER_SECOND = 100;

interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly cpuSeconds: number;
  /** CPU of its children that exited and were waited for (how a backend's CPU outlives it). */
  readonly reapedChildrenCpuSeconds: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17): indices 1, 11–14 here.
  return {
    pid,
    ppid: Number(fields[1]),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    reapedChildrenCpuSeconds: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
  };
}

/** Cumulative CPU seconds (user + system) of one process; 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  return readStat(pid)?.cpuSeconds ?? 0;
}

function pidFromFile(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** Cumulative CPU seconds of each process of the stack in `stackDir` (dev-world/stack's layout) and of this one. */
export function sampleCpu(stackDir: string): CpuSample {
  const postmaster = pidFromFile(join(stackDir, 'postgres/data/postmaster.pid'));
  const stats = allStats();
  const javaCpu = (name: StackProcess) => {
    const pid = pidFromFile(join(stackDir, 'run', `${name}.pid`));
    return stats.find((s) => s.pid === pid)?.cpuSeconds ?? 0;
  };
  const usage = process.cpuUsage();
  return {
    // The live children, plus those that exited (the postmaster reaps every backend): a JDBC
    // sink's connections close with its connector, before the stage's last sample.
    postgres:
      stats
        .filter((s) => s.pid === postmaster || s.ppid === postmaster)
        .reduce((sum, s) => sum + s.cpuSeconds, 0) +
      (stats.find((s) => s.pid === postmaster)?.reapedChildrenCpuSeconds ?? 0),
    kafka: javaCpu('kafka'),
    connect: javaCpu('connect'),
    registry: javaCpu('registry'),
    bench: (usage.user + usage.system) / 1e6,
  };
}

/** CPU seconds spent by each process between two samples. */
export function cpuBetween(before: CpuSample, after: CpuSample): CpuSample {
  const spent = {} as CpuSample;
  for (const key of Object.keys(after) as (keyof CpuSample)[]) {
    spent[key] = Math.max(0, Math.round((after[key] - before[key]) * 100) / 100);
  }
  return spent;
}
