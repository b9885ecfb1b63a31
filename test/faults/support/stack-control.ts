// One stack component stopped as a fault stops it, and the stack brought back: `stack.sh stop
// <component> [--kill|--fast|--immediate]` and `stack.sh up` (ops/stack/README.md, "Faults"). Every
// case that stops a component brings it back in a finally block: the next e2e file needs the stack.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectRequest, repoRoot } from '../../src/stack-env.ts';

const run = promisify(execFile);

export async function stackSh(...args: string[]): Promise<string> {
  const { stderr } = await run('bash', [join(repoRoot, 'ops/stack/stack.sh'), ...args], {
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
