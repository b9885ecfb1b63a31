// A docker-compose project of the whole pipeline (`dev-world/containers/compose.sh up`: the images built
// here, demo data and a demo key) on private ports and a private project name, for the container
// tests; `down` removes it (containers, network, volumes). None of the secrets come from this
// process: compose.sh writes random ones to a private env file.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@pda/projections/testing';
import pg from 'pg';
import { repoRoot } from '../src/stack-env.ts';

export const run = promisify(execFile);
export const SECRETS = [
  'API_CURSOR_SECRET',
  'PDA_PG_PASSWORD',
  'PDA_DEBEZIUM_PASSWORD',
  'PDA_REGISTRY_DB_PASSWORD',
];
const composeScript = join(repoRoot, 'dev-world/containers/compose.sh');

export interface Ports {
  pg: number;
  kafka: number;
  connect: number;
  registry: number;
  api: number;
  apiAdmin: number;
  ingestAdmin: number;
}

export interface ComposeProject {
  readonly project: string;
  readonly ports: Ports;
  readonly envFile: string;
  /** What `up` printed on stderr. */
  readonly upOutput: string;
  /** The demo key `up` printed. */
  readonly key: string;
  /** The secrets `up` wrote to its env file. */
  readonly secrets: Record<string, string>;
  /** A pool on the project's PostgreSQL (database pda). */
  readonly pool: pg.Pool;
  compose(...args: string[]): Promise<{ stdout: string; stderr: string }>;
  /** A GET of the project's api with the demo key; the body parsed as JSON. */
  get<T>(path: string): Promise<{ status: number; body: T }>;
  /** Every site id of the demo key's company, following links.next to the end (a non-200 throws). */
  siteIds(): Promise<string[]>;
  /** `compose.sh down` and the env file removed. */
  down(): Promise<void>;
}

/** `compose.sh up` with `extraEnv` (e.g. PDA_DATA_PARTITIONS) on top of the private ports and names. */
export async function startComposeProject(
  name: string,
  extraEnv: Record<string, string> = {},
): Promise<ComposeProject> {
  const project = `${name}${process.pid}`;
  const envDir = mkdtempSync(join(tmpdir(), 'pda-compose-env-'));
  const envFile = join(envDir, '.env');
  const ports: Ports = {
    pg: await freePort(),
    kafka: await freePort(),
    connect: await freePort(),
    registry: await freePort(),
    api: await freePort(),
    apiAdmin: await freePort(),
    ingestAdmin: await freePort(),
  };
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([n]) => !SECRETS.includes(n)));
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    ...extraEnv,
    PDA_COMPOSE_ENV_FILE: envFile,
    COMPOSE_PROJECT_NAME: project,
    PDA_PG_PORT: String(ports.pg),
    PDA_KAFKA_PORT: String(ports.kafka),
    PDA_CONNECT_PORT: String(ports.connect),
    PDA_REGISTRY_PORT: String(ports.registry),
    API_PORT: String(ports.api),
    API_ADMIN_PORT: String(ports.apiAdmin),
    INGEST_ADMIN_PORT: String(ports.ingestAdmin),
  };
  const compose = (...args: string[]) =>
    run('bash', [composeScript, ...args], { env, maxBuffer: 64 * 2 ** 20, timeout: 900_000 });
  const { stdout, stderr } = await compose('up');
  const match = /export KEY='([^']+)'/.exec(stdout);
  if (!match?.[1]) throw new Error(`compose.sh up printed no demo key:\n${stdout}`);
  const secrets = Object.fromEntries(
    [...readFileSync(envFile, 'utf8').matchAll(/^([A-Z_]+)=(.+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port: ports.pg,
    user: 'pda',
    password: secrets.PDA_PG_PASSWORD ?? '',
    database: 'pda',
    max: 2,
  });
  // Idle clients see PostgreSQL's shutdown as an error event when the project comes down.
  pool.on('error', () => {});
  const get = async <T>(path: string) => {
    const response = await fetch(`http://127.0.0.1:${ports.api}${path}`, {
      headers: { authorization: `Bearer ${match[1]}` },
    });
    return { status: response.status, body: (await response.json()) as T };
  };
  const siteIds = async () => {
    const ids: string[] = [];
    let path: string | null = '/v1/sites?limit=50';
    while (path) {
      const page = await get<{ data: { id: string }[]; links: { next: string | null } }>(path);
      if (page.status !== 200) throw new Error(`GET ${path}: ${page.status}`);
      ids.push(...page.body.data.map((site) => site.id));
      const next: string | null = page.body.links.next;
      path = next ? new URL(next).pathname + new URL(next).search : null;
    }
    return ids;
  };
  return {
    project,
    ports,
    envFile,
    upOutput: stderr,
    key: match[1],
    secrets,
    pool,
    compose,
    get,
    siteIds,
    async down() {
      if (!pool.ended) await pool.end();
      await compose('down').catch((error: unknown) => console.error('compose.sh down failed', error));
      rmSync(envDir, { recursive: true, force: true });
    },
  };
}
