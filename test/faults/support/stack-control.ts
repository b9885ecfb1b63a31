// One stack component stopped as a fault stops it, and the stack brought back: `stack.sh stop
// <component> [--kill|--fast|--immediate]` and `stack.sh up` (dev-world/stack/README.md, "Faults"). Every
// case that stops a component brings it back in a finally block: the next e2e file needs the stack.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pause } from '../../src/pause.ts';
import { connectRequest, kafkaClient, repoRoot, stackEnv, waitFor } from '../../src/stack-env.ts';
import type { IngestProcess } from './ingest-process.ts';
import { round } from './result.ts';

const run = promisify(execFile);

export async function stackSh(...args: string[]): Promise<string> {
  const { stderr } = await run('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), ...args], {
    env: process.env,
    timeout: 300_000,
  });
  return stderr;
}

export interface ConnectorStates {
  readonly connector: string;
  readonly task: string;
}

export async function connectorStates(): Promise<ConnectorStates> {
  const name = process.env.PDA_CONNECTOR_NAME ?? 'pda-postgres';
  const status = (await connectRequest(`/connectors/${name}/status`)) as {
    connector: { state: string };
    tasks: Array<{ state: string }>;
  };
  return { connector: status.connector.state, task: status.tasks[0]?.state ?? 'NONE' };
}

/**
 * Samples the connector's state every `intervalMs` until stopped: which states it went through
 * (an unreachable Connect counts as UNREACHABLE) — a FAILED task is what needs an operator.
 */
export function watchConnector(intervalMs = 500) {
  const seen = new Set<string>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const s = await connectorStates();
        seen.add(`${s.connector}/${s.task}`);
      } catch {
        seen.add('UNREACHABLE');
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return [...seen];
    },
  };
}

/** The sum of the data topics' high watermarks (events in Kafka), or undefined while unreachable. */
async function eventsInKafka(): Promise<number | undefined> {
  const prefix = `${stackEnv().topicPrefix}.public.`;
  const admin = kafkaClient('fault-campaign-watermarks').admin({ retry: { retries: 0 } });
  try {
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    let sum = 0;
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) sum += Number(p.high);
    }
    return sum;
  } catch {
    return undefined;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Seconds from `since` until new change events arrive in Kafka again (the data topics grow past
 * their first reading): how long the capture side (Connect, Debezium, the broker) took, apart from
 * ingest.
 */
export async function eventsFlowingAgainSeconds(since: number, timeoutMs = 180_000): Promise<number> {
  let base: number | undefined;
  await waitFor(
    'change events arriving in Kafka again',
    async () => {
      const now = await eventsInKafka();
      if (now === undefined) return false;
      if (base === undefined) base = now;
      return now > base;
    },
    { timeoutMs, intervalMs: 250 },
  );
  return (Date.now() - since) / 1000;
}

/** One outage's figures, in seconds (rounded), counted from the start of `stack.sh up`. */
export interface OutageFigures {
  readonly downSeconds: number;
  readonly stackUpSeconds: number;
  readonly eventsInKafkaAgainSeconds: number;
  readonly appliedAgainSeconds: number;
  readonly caughtUpSeconds: number;
}

/**
 * One outage under a running ingest: `stack.sh stop <stopArgs>`, `downMs` down, `stack.sh up`
 * (which returns once the connector is RUNNING); then how long until events reach Kafka again and
 * ingest applies again and catches up. `upStarted` is when `stack.sh up` began (epoch ms).
 */
export async function outage(
  ingest: IngestProcess,
  stopArgs: readonly string[],
  downMs: number,
): Promise<{ upStarted: number; figures: OutageFigures }> {
  await stackSh('stop', ...stopArgs);
  await pause(downMs);
  const upStarted = Date.now();
  await stackSh('up');
  const upSeconds = (Date.now() - upStarted) / 1000;
  const inKafka = await eventsFlowingAgainSeconds(upStarted);
  const applied = await ingest.firstAppliedSeconds(180_000, upStarted);
  const caughtUp = await ingest.caughtUpSeconds(180_000, upStarted);
  return {
    upStarted,
    figures: {
      downSeconds: downMs / 1000,
      stackUpSeconds: round(upSeconds),
      eventsInKafkaAgainSeconds: round(inKafka),
      appliedAgainSeconds: round(applied),
      caughtUpSeconds: round(caughtUp),
    },
  };
}
