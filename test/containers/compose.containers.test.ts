// The container path as a black box: `dev-world/containers/compose.sh up` (images built here, the whole
// pipeline in docker-compose, demo data and a demo key) on private ports and a private project
// name; then the partner's view through the api: page a collection to its end, see an update made
// in PostgreSQL, restart the ingest container while rows change and lose nothing; then
// `compose.sh down` and nothing of the project is left (containers, network, volumes).
// No secret defaults: compose refuses to start without each secret, `up` writes random ones to a
// private env file, and no process of the running pipeline has one on its command line.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, waitFor } from '../src/stack-env.ts';
import { type ComposeProject, run, SECRETS, startComposeProject } from './compose-project.ts';

let stack: ComposeProject;
let project: string;
let envFile: string;
let secrets: Record<string, string>;
let upOutput: string;
let pool: pg.Pool;
let companyId: string;
const compose = (...args: string[]) => stack.compose(...args);

/** The parts of v1 answers this test reads (the contract tests check the rest). */
interface Answer {
  data: { id: string; name: string; company: { id: string } } & { id: string }[];
  links: { next: string | null };
}

const api = (path: string) => stack.get<Answer>(path);
const allSiteIds = () => stack.siteIds();

async function siteName(id: string): Promise<string | undefined> {
  const item = await api(`/v1/sites/${id}`);
  return item.status === 200 ? item.body.data.name : undefined;
}

async function projectResources(kind: 'ps' | 'volume' | 'network'): Promise<string[]> {
  const filter = `label=com.docker.compose.project=${project}`;
  const args =
    kind === 'ps'
      ? ['ps', '-a', '--filter', filter, '--format', '{{.Names}}']
      : [kind, 'ls', '--filter', filter, '--format', '{{.Name}}'];
  const { stdout } = await run('docker', args);
  return stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  stack = await startComposeProject('pdatest');
  ({ project, envFile, secrets, upOutput, pool } = stack);
  const me = await api('/v1/me');
  companyId = me.body.data.company.id;
}, 900_000);

afterAll(async () => {
  await stack?.down();
}, 300_000);

/** `docker-compose config` (or v2's `docker compose config`) with only these secrets set, no env file. */
async function composeConfig(secretEnv: Record<string, string>) {
  const v2 = await run('docker', ['compose', 'version']).then(
    () => true,
    () => false,
  );
  const [command, ...first] = v2 ? ['docker', 'compose'] : ['docker-compose'];
  const args = [...first, '--project-directory', repoRoot, '-f', join(repoRoot, 'docker-compose.yml')];
  // versions.env instead of <repo>/.env, as compose.sh does: a developer's .env must not count.
  args.push('--env-file', join(repoRoot, 'dev-world/stack/versions.env'), 'config');
  const bare = { PATH: process.env.PATH, HOME: process.env.HOME, PDA_CAPTURED_TABLES: 'sites', ...secretEnv };
  return run(command ?? 'docker-compose', args, { env: bare }).then(
    ({ stdout }) => ({ ok: true, output: stdout }),
    (error: { stderr?: string }) => ({ ok: false, output: error.stderr ?? '' }),
  );
}

describe('docker-compose: no secret defaults', () => {
  it('refuses to start without each secret, naming it', async () => {
    const all = Object.fromEntries(
      SECRETS.map((name) => [name, `value-of-${name}-0123456789abcdef0123456789`]),
    );
    expect((await composeConfig(all)).ok).toBe(true);
    for (const name of SECRETS) {
      const { [name]: _, ...others } = all;
      const result = await composeConfig(others);
      expect(result.ok, name).toBe(false);
      expect(result.output).toContain(`set ${name}, `);
    }
  });

  it('up wrote random secrets to a private env file', () => {
    expect(upOutput).toContain(`wrote random secrets for the demo to ${envFile} (mode 0600`);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(Object.keys(secrets)).toEqual(SECRETS);
    for (const value of Object.values(secrets)) expect(value).toMatch(/^[0-9a-f]{64}$/);
  });

  it('no process of the pipeline has a secret on its command line', async () => {
    const { stdout } = await run('ps', ['-wweo', 'args'], { maxBuffer: 16 * 2 ** 20 });
    // The processes that hold one: the registry's JVM, PostgreSQL and its sessions, Connect, the api.
    expect(stdout).toMatch(/java .*apicurio-registry-app-[\d.]+-runner\.jar/);
    expect(stdout).toMatch(/postgres -D /);
    for (const [name, value] of Object.entries(secrets)) expect(stdout.includes(value), name).toBe(false);
  });
});

describe('docker-compose: the pipeline in containers', () => {
  it('serves the demo company through the api: every site, paged to the end', async () => {
    const { rows } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM sites WHERE company_id = $1',
      [companyId],
    );
    const expected = Number(rows[0]?.n);
    expect(expected).toBeGreaterThan(50); // more than one page
    const ids = await waitFor('every site projected', async () => {
      const seen = await allSiteIds();
      return seen.length === expected ? seen : undefined;
    });
    expect(new Set(ids).size).toBe(expected);
  });

  it('shows an update made in PostgreSQL', async () => {
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM sites WHERE company_id = $1 ORDER BY id LIMIT 1',
      [companyId],
    );
    const id = rows[0]!.id;
    const name = `Renamed in PostgreSQL ${Date.now()}`;
    await pool.query('UPDATE sites SET name = $2 WHERE id = $1', [id, name]);
    expect(await waitFor('the new name through the api', async () => (await siteName(id)) === name)).toBe(
      true,
    );
  });

  it('loses nothing when the ingest container restarts while rows change', async () => {
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM sites WHERE company_id = $1 ORDER BY id LIMIT 20',
      [companyId],
    );
    const stamp = Date.now();
    const restart = compose('restart', 'ingest');
    for (const [i, row] of rows.entries()) {
      await pool.query('UPDATE sites SET name = $2 WHERE id = $1', [row.id, `During restart ${stamp} ${i}`]);
    }
    await restart;
    for (const [i, row] of rows.entries()) {
      const expected = `During restart ${stamp} ${i}`;
      expect(await waitFor(`site ${i} renamed`, async () => (await siteName(row.id)) === expected)).toBe(
        true,
      );
    }
    const { rows: count } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM sites WHERE company_id = $1',
      [companyId],
    );
    expect((await allSiteIds()).length).toBe(Number(count[0]?.n));
  });

  it('comes down leaving no container, network or volume of the project', async () => {
    await pool.end();
    await compose('down');
    expect(await projectResources('ps')).toEqual([]);
    expect(await projectResources('network')).toEqual([]);
    expect(await projectResources('volume')).toEqual([]);
  });
});
