/**
 * The machine and the code a tenants/fanout.ts run measured: CPU, memory, kernel, Node, descriptor
 * limits, load average; the commit and the files that differed from it when the run started.
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { type NofileLimit, nofileLimit } from './process-stats.ts';

export type ChildrenNofile =
  | 'inherited'
  | { readonly soft: number; readonly hard: number; readonly via: string };

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly kernel: string;
  readonly node: string;
  /** This process's RLIMIT_NOFILE; the children's is `childrenNofile` (read back per case). */
  readonly nofile: NofileLimit;
  readonly childrenNofile: ChildrenNofile;
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
}

const round = (x: number) => Math.round(x * 100) / 100;

/** `loadAtStart`: os.loadavg() when the run started (the end is read now). */
export function machine(loadAtStart: readonly number[], childrenNofile: ChildrenNofile): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    nofile: nofileLimit(),
    childrenNofile,
    loadAverage: { start: loadAtStart.map(round), end: loadavg().map(round) },
  };
}

export interface CodeState {
  readonly commit: string;
  /** Tracked files with uncommitted changes: the working tree is what runs. */
  readonly uncommitted: readonly string[];
}

export function codeState(repoRoot: string): CodeState {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' });
  try {
    // Porcelain lines are "XY path": the first column may be a space, so no trim before slicing.
    const changed = git('status', '--porcelain', '--untracked-files=no')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { commit: git('rev-parse', '--short', 'HEAD').trim(), uncommitted: changed };
  } catch {
    return { commit: 'unknown', uncommitted: [] };
  }
}
