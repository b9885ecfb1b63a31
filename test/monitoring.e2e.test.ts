// The operators' dashboard against the real thing: ingest (consuming the stack's topics) and the api
// (reading what ingest wrote) run as processes with their admin ports; a real Prometheus (Debian
// package, installed by scripts/test.sh) scrapes both every second and loads operator-tools/monitoring/alerts.yml;
// every query of operator-tools/monitoring/grafana-dashboard.json must then return at least one series.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, largeNotes, newScenarioIds } from './src/cdc-scenario.ts';
import { pgPool, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

const children: ChildProcess[] = [];
const dirs: string[] = [];
let pool: pg.Pool;
let prometheusUrl: string;
let apiUrl: string;

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, cwd = repoRoot) {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code, signal) => {
    if (code !== null && code !== 0) console.error(`${name} exited ${code ?? signal}:\n${output}`);
  });
  children.push(child);
  return child;
}

async function query(expr: string): Promise<unknown[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { status: string; error?: string; data?: { result: unknown[] } };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data?.result ?? [];
}

beforeAll(async () => {
  pool = pgPool();
  // At least one change for ingest to apply (staleness and freshness are known only after one).
  await insertRows(pool, newScenarioIds(), largeNotes());

  const dataDir = mkdtempSync(join(tmpdir(), 'pda-monitoring-data-'));
  const promDir = mkdtempSync(join(tmpdir(), 'pda-monitoring-prom-'));
  dirs.push(dataDir, promDir);
  const [ingestAdmin, apiPort, apiAdmin, promPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const env = stackEnv();
  start(
    'ingest',
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, 'ingest/src/main.ts')],
    {
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
      INGEST_TOPIC_PREFIX: env.topicPrefix,
      INGEST_GROUP_ID: `monitoring-${Date.now()}`,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_PORT: String(ingestAdmin),
      INGEST_LOG_LEVEL: 'warn',
    },
  );
  await waitFor(
    'ingest caught up (/readyz)',
    async () => (await fetch(`http://127.0.0.1:${ingestAdmin}/readyz`)).status === 200,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  start('api', process.execPath, [join(repoRoot, 'api/src/main.ts')], {
    API_DATA_DIR: dataDir,
    API_PORT: String(apiPort),
    API_ADMIN_PORT: String(apiAdmin),
    API_CURSOR_SECRET: 'monitoring-e2e-cursor-secret-0123456789abcdef',
    API_LOG_LEVEL: 'warn',
  });
  apiUrl = `http://127.0.0.1:${apiPort}`;
  await waitFor('api', async () => (await fetch(`${apiUrl}/v1/health`)).status > 0, { timeoutMs: 30_000 });

  const rules = join(promDir, 'alerts.yml');
  writeFileSync(rules, readFileSync(join(repoRoot, 'operator-tools/monitoring/alerts.yml')));
  writeFileSync(
    join(promDir, 'prometheus.yml'),
    `global: { scrape_interval: 1s, evaluation_interval: 1s }
rule_files: [${rules}]
scrape_configs:
  - job_name: pda-ingest
    static_configs: [{ targets: ['127.0.0.1:${ingestAdmin}'] }]
  - job_name: pda-api
    static_configs: [{ targets: ['127.0.0.1:${apiAdmin}'] }]
`,
  );
  start(
    'prometheus',
    'prometheus',
    [
      `--config.file=${join(promDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(promDir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ],
    {},
  );
  prometheusUrl = `http://127.0.0.1:${promPort}`;
  await waitFor('prometheus scraping both targets', async () => (await query('up == 1')).length === 2, {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
}, 240_000);

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await pool?.end();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('operator-tools/monitoring against a real Prometheus', () => {
  it('loads the alert rules', async () => {
    const response = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: unknown[] }[] };
    };
    expect(response.data.groups.map((g) => g.name).sort()).toEqual(['pda-api', 'pda-ingest', 'pda-source']);
  });

  it('answers every dashboard panel with at least one series', async () => {
    // Traffic for the api's request series: a health probe, an unauthenticated call (401), a 404.
    for (const path of ['/v1/health', '/v1/sites', '/v1/nope']) await fetch(`${apiUrl}${path}`);
    const dashboard = JSON.parse(
      readFileSync(join(repoRoot, 'operator-tools/monitoring/grafana-dashboard.json'), 'utf8'),
    ) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((panel) =>
      panel.targets.map((t) => ({ title: panel.title, expr: t.expr })),
    );
    // rate() needs two scrapes after the traffic: poll until every panel has data, then report the rest.
    const empty = await waitFor(
      'every panel to return a series',
      async () => {
        const missing: string[] = [];
        for (const { title, expr } of exprs) if ((await query(expr)).length === 0) missing.push(title);
        return missing.length === 0 ? missing : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1_000 },
    ).catch(async () => {
      const missing: string[] = [];
      for (const { title, expr } of exprs)
        if ((await query(expr)).length === 0) missing.push(`${title}: ${expr}`);
      return missing;
    });
    expect(empty).toEqual([]);
  });
});
