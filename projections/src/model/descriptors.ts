import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

/**
 * How many projection files a process may keep open, derived from its open-file limit instead of a
 * fixed default (docs/operations.md#sizing-a-node).
 *
 * An open WAL-mode SQLite file holds three descriptors: the database, its -wal and its -shm. Node
 * raises the soft RLIMIT_NOFILE to the hard limit when it starts, so the soft limit read here is
 * already the most the process can have; an operator raises the hard one (systemd LimitNOFILE,
 * `docker run --ulimit nofile=`, `ulimit -Hn` as root).
 */

export const DESCRIPTORS_PER_OPEN_FILE = 3;

/**
 * Below this open-file limit ingest and the api refuse to start (their main.ts, exit 2): Node, the
 * process's own connections and a few company files do not fit (~30 descriptors idle, measured).
 */
export const MIN_OPEN_FILE_LIMIT = 96;

/** The one-line refusal for a limit below MIN_OPEN_FILE_LIMIT; undefined when it is enough or unknown. */
export function openFileLimitProblem(limit: number | undefined, deployable: string): string | undefined {
  if (limit === undefined || limit >= MIN_OPEN_FILE_LIMIT) return undefined;
  return `the open-file limit (${limit}) is below the ${MIN_OPEN_FILE_LIMIT} ${deployable} needs at least; raise it (ulimit -n, LimitNOFILE, --ulimit nofile=): docs/operations.md, "Sizing a node"`;
}

/** Used where the limit cannot be read (not Linux): the usual default soft limit. */
const UNKNOWN_LIMIT = 1024;

/**
 * Memory an open company file holds outside the JS heap (schema, statements, page cache of a small
 * tenant, the -shm mapping): about the most bench/tenants/company-file-costs.ts measured per open file
 * (bench/README.md, "What one company file costs").
 */
export const MEMORY_PER_OPEN_FILE = 256 * 1024;
/** Share of the process's memory the open files may take: the rest is for the process itself. */
const MEMORY_SHARE = 0.25;

/** The memory the process may use: its cgroup limit (a container) or the machine's. */
export function processMemoryBytes(): number {
  return Math.min(process.constrainedMemory(), totalmem());
}

/** The process's soft limit on open files, from /proc/self/limits; undefined where it cannot be read. */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const line = text.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const value = Number(soft);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

export interface FileBudgetOptions {
  /** The process's open-file limit (undefined: unknown, assume 1024). */
  readonly limit: number | undefined;
  /**
   * Descriptors kept for everything else (sockets, control.sqlite, logs): at most this many, and
   * never more than half of the limit, so a low limit still leaves room for some files.
   */
  readonly reserve: number;
  /**
   * The process's memory (processMemoryBytes()): open files may take a quarter of it, so a small
   * container is not sized by its descriptors alone. Absent: no memory bound.
   */
  readonly memoryBytes?: number;
}

/**
 * The descriptors kept out of the company-file budget: `wanted`, but never more than half of the
 * limit (an unknown limit counts as 1,024), so a low limit still leaves room for some files. The
 * writer's budget and the api's connection cap (api/src/connections/descriptor-plan.ts) both use it.
 */
export function descriptorReserve(limit: number | undefined, wanted: number): number {
  return Math.min(wanted, Math.floor((limit ?? UNKNOWN_LIMIT) / 2));
}

/**
 * Files that fit in the limit after the reserve, three descriptors each, and in a quarter of the
 * memory; at least 1.
 */
export function openFilesBudget(options: FileBudgetOptions): number {
  const limit = options.limit ?? UNKNOWN_LIMIT;
  const reserve = descriptorReserve(options.limit, options.reserve);
  const byDescriptors = Math.floor((limit - reserve) / DESCRIPTORS_PER_OPEN_FILE);
  const byMemory =
    options.memoryBytes === undefined
      ? Number.POSITIVE_INFINITY
      : Math.floor((options.memoryBytes * MEMORY_SHARE) / MEMORY_PER_OPEN_FILE);
  return Math.max(1, Math.min(byDescriptors, byMemory));
}

export interface OpenFilesBound {
  /** Files the cache may hold. */
  readonly max: number;
  /** Where it came from: the budget (`auto`), the setting, or the setting cut to the budget. */
  readonly source: 'auto' | 'configured' | 'clamped';
  readonly limit: number | undefined;
  readonly budget: number;
}

/**
 * The cache bound for a setting of `auto` or a number. A number above the budget is cut to it: a
 * cache the descriptors cannot hold would end in EMFILE instead of evictions.
 */
export function resolveOpenFilesBound(setting: number | 'auto', options: FileBudgetOptions): OpenFilesBound {
  const budget = openFilesBudget(options);
  if (setting === 'auto') return { max: budget, source: 'auto', limit: options.limit, budget };
  if (setting > budget) return { max: budget, source: 'clamped', limit: options.limit, budget };
  return { max: setting, source: 'configured', limit: options.limit, budget };
}

/**
 * The cache bound of this process: its open-file limit (Node raised the soft limit to the hard one
 * at start) and its memory, after `reserve` descriptors for everything else. The writer
 * (ProjectionStore, ingest's worker) and the api's read cache size their caches with it.
 */
export function processOpenFilesBound(setting: number | 'auto', reserve: number): OpenFilesBound {
  return resolveOpenFilesBound(setting, {
    limit: openFileLimit(),
    reserve,
    memoryBytes: processMemoryBytes(),
  });
}

/**
 * Runs `open`; if it ran out of descriptors (a limit lower than the bound assumed, or descriptors
 * held elsewhere in the process), asks `giveBack` to close some open files and, when it did (true),
 * runs `open` once more. The writer's and the api's file caches both recover this way.
 */
export function retryOutOfDescriptors<T>(open: () => T, giveBack: () => boolean): T {
  try {
    return open();
  } catch (error) {
    if (!isOutOfDescriptors(error) || !giveBack()) throw error;
    return open();
  }
}

/**
 * True for the error of an open that ran out of descriptors: SQLite reports it as CANTOPEN, Node's
 * fs as EMFILE/ENFILE, the projections' readers as OutOfDescriptorsError.
 */
export function isOutOfDescriptors(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === 'SQLITE_CANTOPEN' || code === 'EMFILE' || code === 'ENFILE' || code === 'out_of_descriptors'
  );
}
