/**
 * What tenants/fanout.ts reads from the system about a child process and a data directory: memory
 * and open descriptors from /proc, the descriptor limit, the disk a projection takes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface ProcessStats {
  readonly rssMb: number;
  /** VmHWM: the peak resident set of the process's life (all its threads). */
  readonly peakRssMb: number;
  readonly openFds: number;
  /** User + system CPU seconds of the process so far (all its threads). */
  readonly cpuSeconds: number;
}

export function processStats(pid: number): ProcessStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return {
    rssMb: Math.round(kb('VmRSS') / 1024),
    peakRssMb: Math.round(kb('VmHWM') / 1024),
    openFds: readdirSync(`/proc/${pid}/fd`).length,
    cpuSeconds: cpuSecondsOf(pid),
  };
}

/** utime + stime from /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux). */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface NofileLimit {
  readonly soft: number | 'unlimited';
  readonly hard: number | 'unlimited';
}

/** RLIMIT_NOFILE of a process ('self' = this one), as the kernel reports it. */
export function nofileLimit(pid: number | 'self' = 'self'): NofileLimit {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const [soft = 'unlimited', hard = 'unlimited'] =
    line?.slice('Max open files'.length).trim().split(/\s+/) ?? [];
  const value = (v: string) => (v === 'unlimited' ? 'unlimited' : Number(v));
  return { soft: value(soft), hard: value(hard) };
}

export interface DiskUse {
  /** Allocated bytes (st_blocks × 512, what du counts) by kind of file, over the whole directory. */
  readonly sqliteBytes: number;
  readonly walBytes: number;
  readonly shmBytes: number;
  readonly otherBytes: number;
  /** companies/<id>.sqlite files and the allocated bytes of each (its -wal and -shm included). */
  readonly companyFiles: number;
  readonly perCompanyFile: {
    readonly sqliteMedianBytes: number;
    readonly sqliteMaxBytes: number;
    readonly withWalShmMedianBytes: number;
    readonly withWalShmMaxBytes: number;
  };
}

export function diskUse(dataDir: string): DiskUse {
  const totals = { sqliteBytes: 0, walBytes: 0, shmBytes: 0, otherBytes: 0 };
  const perCompany = new Map<string, { sqlite: number; all: number }>();
  const companiesDir = join(dataDir, 'companies');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      if (!entry.isFile()) continue;
      // The writer may close a file (and SQLite delete its -wal, -shm) between readdir and stat.
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      const bytes = stat.blocks * 512;
      const kind = entry.name.endsWith('.sqlite')
        ? 'sqliteBytes'
        : entry.name.endsWith('-wal')
          ? 'walBytes'
          : entry.name.endsWith('-shm')
            ? 'shmBytes'
            : 'otherBytes';
      totals[kind] += bytes;
      if (dir !== companiesDir || kind === 'otherBytes') continue;
      const base = entry.name.replace(/-(wal|shm)$/, '');
      const company = perCompany.get(base) ?? { sqlite: 0, all: 0 };
      company.all += bytes;
      if (kind === 'sqliteBytes') company.sqlite += bytes;
      perCompany.set(base, company);
    }
  };
  walk(dataDir);
  const companies = [...perCompany.values()];
  const sqlite = companies.map((c) => c.sqlite).sort((a, b) => a - b);
  const all = companies.map((c) => c.all).sort((a, b) => a - b);
  return {
    ...totals,
    companyFiles: companies.length,
    perCompanyFile: {
      sqliteMedianBytes: median(sqlite),
      sqliteMaxBytes: sqlite.at(-1) ?? 0,
      withWalShmMedianBytes: median(all),
      withWalShmMaxBytes: all.at(-1) ?? 0,
    },
  };
}

const median = (sorted: readonly number[]) => sorted[Math.floor(sorted.length / 2)] ?? 0;
