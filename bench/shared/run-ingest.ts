/**
 * One ingest measurement of tenants/fanout.ts: the real worker in a child process
 * (shared/ingest-child.ts, optionally under a launcher such as `prlimit --nofile=N:N`)
 * consumes a case's pre-filled topics into a fresh data directory. When every event is handled,
 * and while its files are still open, its memory, descriptors and the directory's disk are read;
 * then it is stopped (drain, commit, close) and its log's errors are counted.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  type DiskUse,
  diskUse,
  type NofileLimit,
  nofileLimit,
  type ProcessStats,
  processStats,
} from './process-stats.ts';

export interface IngestOptions {
  readonly groupId: string;
  readonly topicPrefix: string;
  readonly dataDir: string;
  /** All events in the topics (setup + data). */
  readonly expectedEvents: number;
  readonly dataTables: readonly string[];
  /** The case's company count: the child notes when every company's file is open. */
  readonly companies: number;
  readonly launcher: readonly string[];
  /** Give up when nothing more is handled for this long. */
  readonly stallSeconds: number;
  /** INGEST_* variables the child's worker gets on top of the benchmark's (ingest/writers.ts: ownership). */
  readonly ingestEnv?: Readonly<Record<string, string>>;
}

export interface IngestResult {
  readonly events: number;
  readonly dataEvents: number;
  readonly outcomes: Record<string, number>;
  readonly seconds: number | null;
  readonly startupSeconds: number | null;
  /** Data events per second from the first applied chunk on (setup events apply in the window too). */
  readonly steadyDataEventsPerSecond: number | null;
  readonly steadyEventsPerSecond: number | null;
  /** Data events per second once every company's file was open (no file creation in it). */
  readonly everyFileOpenDataEventsPerSecond: number | null;
  readonly applyCalls: number | null;
  readonly fileCache: Record<string, number>;
  /** Read while the worker still runs with its files open (null if it never finished). */
  readonly process: ProcessStats | null;
  readonly nofile: NofileLimit | null;
  readonly disk: DiskUse | null;
  /** Log lines of level error/fatal and warn; the last error lines; exit code after SIGTERM. */
  readonly logErrors: number;
  readonly logWarnings: number;
  readonly lastErrors: readonly string[];
  readonly exitCode: number | null;
  /** False when it did not exit within 60 s of SIGTERM and was killed. */
  readonly stoppedInTime: boolean;
  /** Why the measurement is incomplete (worker failed, exited, stalled), or null. */
  readonly failure: string | null;
}

interface Message {
  readonly type: 'progress' | 'done' | 'stopped' | 'failed';
  readonly [field: string]: unknown;
}

export async function runIngest(options: IngestOptions): Promise<IngestResult> {
  const argv = [
    ...options.launcher,
    process.execPath,
    // What ingest's start script gives the worker (ingest/package.json).
    '--max-semi-space-size=64',
    '--disable-warning=TimeoutNegativeWarning',
    join(import.meta.dirname, 'ingest-child.ts'),
    '--group',
    options.groupId,
    '--prefix',
    options.topicPrefix,
    '--data-dir',
    options.dataDir,
    '--expect',
    String(options.expectedEvents),
    '--data-tables',
    options.dataTables.join(','),
    '--companies',
    String(options.companies),
  ];
  const child = spawn(argv[0] ?? process.execPath, argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.ingestEnv },
  });
  const pid = child.pid ?? 0;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let logErrors = 0;
  let logWarnings = 0;
  const lastErrors: string[] = [];
  const messages: Message[] = [];
  let wake = () => {};
  const onLine = (line: string) => {
    if (line.startsWith('FANOUT ')) {
      messages.push(JSON.parse(line.slice(7)) as Message);
      wake();
      return;
    }
    if (line.trim() === '') return;
    // pino's JSON lines (level 40 warn, 50 error, 60 fatal); anything else (a crash's stack) is an error.
    let level = 50;
    try {
      level = Number((JSON.parse(line) as { level?: unknown }).level ?? 50);
    } catch {}
    if (level >= 50) {
      logErrors++;
      lastErrors.push(line.slice(0, 500));
      if (lastErrors.length > 5) lastErrors.shift();
    } else if (level >= 40) logWarnings++;
  };
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    stream.on('end', () => rest && onLine(rest));
  }
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
    wake();
  });

  let done: Message | undefined;
  let failure: string | null = null;
  let lastEvents = -1;
  let lastChange = performance.now();
  let stats: Pick<IngestResult, 'process' | 'nofile' | 'disk'> = { process: null, nofile: null, disk: null };
  while (!done && failure === null) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, 1000);
    });
    for (const m of messages.splice(0)) {
      if (m.type === 'done') done = m;
      else if (m.type === 'failed') failure = `worker failed: ${String(m.error).split('\n')[0]}`;
      else if (m.type === 'progress' && m.events !== lastEvents) {
        lastEvents = Number(m.events);
        lastChange = performance.now();
      }
    }
    if (done) {
      // Still running, files open: what a node holds while it keeps up with these tenants.
      stats = { process: processStats(pid), nofile: nofileLimit(pid), disk: diskUse(options.dataDir) };
    } else if (failure === null && exitCode !== undefined) {
      failure = `worker exited (${exitCode}) after ${Math.max(lastEvents, 0)} of ${options.expectedEvents} events`;
    } else if (failure === null && performance.now() - lastChange > options.stallSeconds * 1000) {
      failure = `no progress for ${options.stallSeconds} s at ${Math.max(lastEvents, 0)} of ${options.expectedEvents} events`;
    }
  }
  let stoppedInTime = true;
  if (exitCode === undefined) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      stoppedInTime = false;
      child.kill('SIGKILL');
    }, 60_000);
    await exited;
    clearTimeout(timer);
  }
  if (stats.disk === null) stats = { ...stats, disk: diskUse(options.dataDir) };
  const field = (name: string, digits = 2) => {
    const value = done?.[name];
    return typeof value === 'number' ? Math.round(value * 10 ** digits) / 10 ** digits : null;
  };
  return {
    events: field('events') ?? Math.max(lastEvents, 0),
    dataEvents: field('dataEvents') ?? 0,
    outcomes: (done?.outcomes as Record<string, number> | undefined) ?? {},
    seconds: field('seconds'),
    startupSeconds: field('startupSeconds'),
    steadyDataEventsPerSecond: field('steadyDataEventsPerSecond', 0),
    steadyEventsPerSecond: field('steadyEventsPerSecond', 0),
    everyFileOpenDataEventsPerSecond: field('everyFileOpenDataEventsPerSecond', 0),
    applyCalls: field('applyCalls'),
    fileCache: (done?.fileCache as Record<string, number> | undefined) ?? {},
    ...stats,
    logErrors,
    logWarnings,
    lastErrors,
    exitCode: exitCode ?? null,
    stoppedInTime,
    failure,
  };
}

/** The result of an ingest that never ran (its case failed before). */
export function notMeasured(failure: string): IngestResult {
  return {
    events: 0,
    dataEvents: 0,
    outcomes: {},
    seconds: null,
    startupSeconds: null,
    steadyDataEventsPerSecond: null,
    steadyEventsPerSecond: null,
    everyFileOpenDataEventsPerSecond: null,
    applyCalls: null,
    fileCache: {},
    process: null,
    nofile: null,
    disk: null,
    logErrors: 0,
    logWarnings: 0,
    lastErrors: [],
    exitCode: null,
    stoppedInTime: true,
    failure,
  };
}
