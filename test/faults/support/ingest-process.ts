// ingest as the operator runs it: a child process of `ingest/src/main.ts` on the stack's topics,
// its pino lines parsed as they come. What the campaign measures of a (re)start comes from there and
// from the admin port: spawn → first applied batch (the one 'batch applied' line per batch with
// applied > 0) and spawn → caught up (/readyz reports a measured lag of 0).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, stackEnv, waitFor } from '../../src/stack-env.ts';
import { watchChild } from './child-output.ts';

export interface IngestOptions {
  readonly dataDir: string;
  readonly groupId: string;
  /** INGEST_* settings on top of the stack's addresses. */
  readonly env?: Record<string, string>;
}

export interface LogLine {
  readonly time: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface IngestProcess {
  readonly child: ChildProcess;
  /** Date.now() just before the spawn. */
  readonly spawnedAt: number;
  readonly lines: LogLine[];
  stderr(): string;
  alive(): boolean;
  adminPort(): Promise<number>;
  /** Seconds from `since` (default: the spawn) to the first batch that applied a change (its log line's time). */
  firstAppliedSeconds(timeoutMs?: number, since?: number): Promise<number>;
  /** Seconds from the spawn to kafkajs's 'Consumer has joined the group' (the takeover done). */
  joinedSeconds(timeoutMs?: number): Promise<number>;
  /** What the start's takeover of a dead predecessor logged (its messages, in order). */
  takeoverLines(): string[];
  /** Seconds from `since` (default: the spawn) to the first /readyz with a measured lag of 0. */
  caughtUpSeconds(timeoutMs?: number, since?: number): Promise<number>;
  /** The distinct messages of warn-or-worse lines logged since `since` (what an operator sees). */
  warnings(since: number): string[];
  /** The sum of a metric's samples whose labels contain `labels` (e.g. 'outcome="skipped"'). */
  metric(name: string, labels?: string): Promise<number>;
  kill9(): Promise<void>;
  /** SIGTERM: drain, commit, exit 0. Resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The admin token every ingest of the campaign starts with (INGEST_ADMIN_TOKEN_FILE, ingest/README.md
 * "Operations: admin port"): the rebuild command reads the same file, and /readyz names the
 * companies out of service only to it.
 */
const adminTokenValue = randomBytes(32).toString('hex');
export const ADMIN_TOKEN_FILE = join(mkdtempSync(join(tmpdir(), 'pda-e2e-admin-')), 'admin-token');
writeFileSync(ADMIN_TOKEN_FILE, `${adminTokenValue}\n`, { mode: 0o600 });
export const ADMIN_HEADERS: Readonly<Record<string, string>> = { authorization: `Bearer ${adminTokenValue}` };

export function ingestEnv(options: IngestOptions): Record<string, string> {
  const stack = stackEnv();
  return {
    INGEST_KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    INGEST_TOPIC_PREFIX: stack.topicPrefix,
    INGEST_GROUP_ID: options.groupId,
    INGEST_DATA_DIR: options.dataDir,
    INGEST_ADMIN_PORT: '0',
    INGEST_ADMIN_TOKEN_FILE: ADMIN_TOKEN_FILE,
    INGEST_LOG_LEVEL: 'info',
    // The connector may write Avro (dev-world/stack/README.md): ingest then needs the registry.
    ...(process.env.PDA_SCHEMA_REGISTRY_URL
      ? { INGEST_SCHEMA_REGISTRY_URL: process.env.PDA_SCHEMA_REGISTRY_URL }
      : {}),
    ...options.env,
  };
}

export function startIngest(options: IngestOptions): IngestProcess {
  const env = ingestEnv(options); // before the clock starts: it may read the stack's env file
  const spawnedAt = Date.now();
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=64', '--disable-warning=TimeoutNegativeWarning', 'src/main.ts'],
    { env: { ...process.env, ...env }, cwd: join(repoRoot, 'ingest'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: LogLine[] = [];
  const { stderr, alive, exited } = watchChild(child, (part) => {
    try {
      lines.push(JSON.parse(part) as LogLine);
    } catch {
      // not a log line
    }
  });
  const line = (what: string, match: (l: LogLine) => boolean, timeoutMs: number) =>
    waitFor(
      what,
      () => {
        if (!alive()) throw new Error(`ingest exited (${child.exitCode ?? child.signalCode}): ${stderr()}`);
        return lines.find(match);
      },
      { timeoutMs, intervalMs: 50 },
    );
  const adminPort = async () =>
    Number((await line('ingest started', (l) => l.msg === 'ingest started', 60_000)).adminPort);

  return {
    child,
    spawnedAt,
    lines,
    stderr,
    alive,
    adminPort,
    async firstAppliedSeconds(timeoutMs = 120_000, since = spawnedAt) {
      const first = await line(
        'a batch that applied changes',
        (l) => l.msg === 'batch applied' && Number(l.applied) > 0 && l.time >= since,
        timeoutMs,
      );
      return (first.time - since) / 1000;
    },
    async joinedSeconds(timeoutMs = 120_000) {
      const joined = await line(
        'the consumer group joined',
        (l) => l.msg === 'Consumer has joined the group',
        timeoutMs,
      );
      return (joined.time - spawnedAt) / 1000;
    },
    takeoverLines() {
      return lines
        .filter((l) => /previous (worker|group member)|LeaveGroup/.test(l.msg))
        .map((l) =>
          [l.msg, l.error, l.ms === undefined ? undefined : `${l.ms} ms`].filter(Boolean).join(': '),
        );
    },
    async caughtUpSeconds(timeoutMs = 120_000, since = spawnedAt) {
      const port = await adminPort();
      // After an outage the lag poll may still hold the old high watermarks: caught up counts only
      // once something was applied again.
      if (since !== spawnedAt) await this.firstAppliedSeconds(timeoutMs, since);
      await waitFor(
        'ingest caught up (/readyz lag 0)',
        async () => {
          if (!alive()) throw new Error(`ingest exited: ${stderr()}`);
          const body = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
            lag: number | null;
          };
          return body.lag === 0;
        },
        { timeoutMs, intervalMs: 100 },
      );
      return (Date.now() - since) / 1000;
    },
    warnings(since) {
      return [...new Set(lines.filter((l) => Number(l.level) >= 40 && l.time >= since).map((l) => l.msg))];
    },
    async metric(name, labels = '') {
      const text = await (await fetch(`http://127.0.0.1:${await adminPort()}/metrics`)).text();
      let sum = 0;
      for (const row of text.split('\n')) {
        if (row.startsWith(`${name}{`) || row.startsWith(`${name} `)) {
          if (row.includes(labels)) sum += Number(row.slice(row.lastIndexOf(' ') + 1));
        }
      }
      return sum;
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited();
    },
    async stop() {
      if (!alive()) return child.exitCode;
      child.kill('SIGTERM');
      await exited();
      return child.exitCode;
    },
  };
}
