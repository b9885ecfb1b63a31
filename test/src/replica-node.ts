// One node of a replicated deployment (docs/deployment-replicas.md) as real processes: an `ingest`
// with its own consumer group and data directory (reading the stack's topics from the beginning:
// Kafka is the replication log) and an `api` on that directory, each a child process that a test
// can kill with SIGKILL and start again on the same directory, group and ports. Each node has an
// address of its own on the loopback network (127.0.0.0/8 is all local on Linux) and every node
// uses the same ports, as nodes on separate machines would.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import { repoRoot, stackEnv } from './stack-env.ts';

export interface Child {
  readonly process: ChildProcess;
  /** The last 8 KB of its output, for a failure message. */
  output(): string;
}

/** A child process whose output is kept (the tail) and reported if it exits on its own. */
export function startChild(name: string, args: string[], env: Record<string, string>, cwd = repoRoot): Child {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code) => {
    if (code !== null && code !== 0) console.error(`${name} exited with ${code}:\n${output}`);
  });
  return { process: child, output: () => output };
}

/** Sends `signal` and waits for the exit (at once if it has already exited). */
export async function stopChild(child: Child | undefined, signal: NodeJS.Signals): Promise<void> {
  const p = child?.process;
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((resolve) => p.once('exit', resolve));
  p.kill(signal);
  await exited;
}

export interface NodePorts {
  readonly apiPort: number;
  readonly apiAdminPort: number;
  readonly ingestAdminPort: number;
}

/** Three free ports (free on 127.0.0.1; the nodes listen on other loopback addresses). */
export async function nodePorts(): Promise<NodePorts> {
  return { apiPort: await freePort(), apiAdminPort: await freePort(), ingestAdminPort: await freePort() };
}

export interface NodeOptions {
  readonly name: string;
  /** The node's own loopback address, e.g. 127.0.0.11. */
  readonly host: string;
  readonly ports: NodePorts;
  /** API_* settings shared by every node (cursor secret, public base URL, Redis, trusted proxy…). */
  readonly api: Record<string, string>;
  /** This node's own API_* settings on top (writers split by company: its writer name). */
  readonly apiEnv?: Record<string, string>;
  /** INGEST_* settings on top of the stack's (another topic prefix; the ownership file and writer name). */
  readonly ingestEnv?: Record<string, string>;
}

export interface ReplicaNode {
  readonly name: string;
  readonly dataDir: string;
  readonly groupId: string;
  readonly host: string;
  readonly apiUrl: string;
  /** Ingest's /readyz. */
  readonly readyUrl: string;
  startIngest(): void;
  startApi(): void;
  /** SIGKILL (a crash) or SIGTERM (an orderly stop). */
  stopIngest(signal: NodeJS.Signals): Promise<void>;
  stopApi(signal: NodeJS.Signals): Promise<void>;
  ingestRunning(): boolean;
  /** The INGEST_* environment its ingest runs with (for a command on the same directory). */
  ingestEnvironment(): Record<string, string>;
  apiRunning(): boolean;
}

export function createNode(options: NodeOptions): ReplicaNode {
  const dataDir = mkdtempSync(join(tmpdir(), `pda-replica-${options.name}-`));
  const groupId = `e2e-replica-${options.name}-${randomUUID()}`;
  const { host, ports } = options;
  let ingest: Child | undefined;
  let api: Child | undefined;
  const running = (c: Child | undefined) =>
    c !== undefined && c.process.exitCode === null && c.process.signalCode === null;

  const ingestEnvironment = (): Record<string, string> => {
    const env = stackEnv();
    // Set once the stack's env file is read (stackEnv): the registry that decodes Avro topics.
    const registry = process.env.PDA_SCHEMA_REGISTRY_URL;
    return {
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_TOPIC_PREFIX: env.topicPrefix,
      INGEST_GROUP_ID: groupId,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_HOST: host,
      INGEST_ADMIN_PORT: String(ports.ingestAdminPort),
      INGEST_LOG_LEVEL: 'warn',
      ...(registry ? { INGEST_SCHEMA_REGISTRY_URL: registry } : {}),
      ...options.ingestEnv,
    };
  };

  return {
    name: options.name,
    dataDir,
    groupId,
    host,
    apiUrl: `http://${host}:${ports.apiPort}`,
    readyUrl: `http://${host}:${ports.ingestAdminPort}/readyz`,
    startIngest() {
      ingest = startChild(
        `${options.name} ingest`,
        ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, 'ingest/src/main.ts')],
        ingestEnvironment(),
        join(repoRoot, 'ingest'),
      );
    },
    ingestEnvironment,
    startApi() {
      api = startChild(`${options.name} api`, [join(repoRoot, 'api/src/main.ts')], {
        ...options.api,
        ...options.apiEnv,
        API_DATA_DIR: dataDir,
        API_HOST: host,
        API_PORT: String(ports.apiPort),
        API_ADMIN_HOST: host,
        API_ADMIN_PORT: String(ports.apiAdminPort),
      });
    },
    stopIngest: (signal) => stopChild(ingest, signal),
    stopApi: (signal) => stopChild(api, signal),
    ingestRunning: () => running(ingest),
    apiRunning: () => running(api),
  };
}
