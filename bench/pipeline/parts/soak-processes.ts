/**
 * The two deployables of a soak (pipeline/soak.ts), each started as its start script starts it
 * (`node … src/main.ts`) in a process of its own on one fresh data directory: ingest from a new
 * consumer group of the running stack's topics, with an admin token file (its per-company
 * rebuild needs it), and the api on the same files. The api can be stopped and started again on
 * the same files, port and cursor secret: the partners' cursors and tokens stay valid.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import { benchApiEnv, type Server, startServer } from '../../shared/api-processes.ts';
import { benchWorkerEnv } from '../../shared/ingest-worker.ts';
import { repoRoot } from '../../shared/paths.ts';

export interface IngestProcess extends Server {
  /** The admin port's address (/metrics, /readyz, /rebuild). */
  readonly admin: string;
  readonly adminToken: string;
}

export interface ApiProcess extends Server {
  readonly admin: string;
}

const answers = (path: string) => async (base: string) =>
  (await fetch(`${base}${path}`, { signal: AbortSignal.timeout(2_000) })).status === 200;

/** Ingest from `groupId` into `dataDir` (`workDir` keeps its token file); ready once its admin port answers. */
export async function startIngest(options: {
  readonly dataDir: string;
  readonly workDir: string;
  readonly groupId: string;
  readonly topicPrefix: string;
}): Promise<IngestProcess> {
  const adminToken = randomBytes(32).toString('hex');
  const tokenFile = join(options.workDir, 'ingest-admin-token');
  writeFileSync(tokenFile, adminToken, { mode: 0o600 });
  const port = await freePort();
  const server = await startServer(
    'ingest',
    join(repoRoot, 'ingest/src/main.ts'),
    port,
    {
      ...benchWorkerEnv(options),
      INGEST_CLIENT_ID: options.groupId,
      INGEST_ADMIN_PORT: String(port),
      INGEST_ADMIN_TOKEN_FILE: tokenFile,
    },
    answers('/healthz'),
    // ingest/package.json's start script.
    ['--max-semi-space-size=64', '--disable-warning=TimeoutNegativeWarning'],
  );
  return { ...server, admin: server.base, adminToken };
}

/** The api's settings for every process of one soak: one port pair, one cursor secret. */
export async function soakApiEnv(dataDir: string, extra: Record<string, string>) {
  const port = await freePort();
  const adminPort = await freePort();
  return {
    port,
    adminPort,
    env: benchApiEnv(dataDir, port, { API_ADMIN_PORT: String(adminPort), ...extra }),
  };
}

export async function startApi(settings: Awaited<ReturnType<typeof soakApiEnv>>): Promise<ApiProcess> {
  const server = await startServer(
    'api',
    join(repoRoot, 'api/src/main.ts'),
    settings.port,
    settings.env,
    answers('/v1/version'),
  );
  return { ...server, admin: `http://127.0.0.1:${settings.adminPort}` };
}

/** The pino lines of level error or fatal in a process's kept output (its last 20,000 characters). */
export function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    try {
      return Number((JSON.parse(line) as { level?: unknown }).level) >= 50;
    } catch {
      return false;
    }
  });
}
