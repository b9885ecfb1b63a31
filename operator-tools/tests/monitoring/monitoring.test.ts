// The operators' kit (operator-tools/monitoring) checked by Prometheus' own tool (Debian package `prometheus`,
// installed by scripts/test.sh): the alert rules parse and their unit tests (alerts.test.yml) pass,
// the example scrape config loads them, and every metric the dashboard and the alerts name is one
// that ingest or the api defines. test/monitoring.e2e.test.ts runs every panel's query against a
// real Prometheus scraping both deployables.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const monitoring = join(repoRoot, 'operator-tools/monitoring');

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { cwd: monitoring, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const { stdout, stderr, code } = error as { stdout?: string; stderr?: string; code?: string };
    if (code === 'ENOENT')
      throw new Error('promtool not found: apt-get install prometheus (scripts/test.sh does)');
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** Metric names the deployables define (prom-client `name:` fields) plus their derived series. */
function definedMetrics(): Set<string> {
  const names = new Set<string>();
  for (const file of ['ingest/src/observability/metrics.ts', 'api/src/observability/metrics.ts']) {
    for (const match of readFileSync(join(repoRoot, file), 'utf8').matchAll(/name: '(pda_[a-z_]+)'/g)) {
      const name = match[1] as string;
      for (const suffix of ['', '_bucket', '_sum', '_count']) names.add(name + suffix);
    }
  }
  // collectDefaultMetrics with the deployables' prefixes (the ones the kit uses).
  for (const prefix of ['pda_ingest_', 'pda_api_']) names.add(`${prefix}process_resident_memory_bytes`);
  return names;
}

function referencedMetrics(text: string): string[] {
  return [...new Set([...text.matchAll(/\b(pda_(?:ingest|api)_[a-z_]+)\b/g)].map((m) => m[1] as string))];
}

describe('operator-tools/monitoring', () => {
  it('alert rules parse and pass their unit tests', () => {
    expect(promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: \d+ rules found/);
    expect(promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
  });

  it('the example scrape config loads with the rules', () => {
    expect(promtool('check', 'config', 'prometheus.yml')).toMatch(/SUCCESS/);
  });

  it('names only metrics that ingest or the api define', () => {
    const defined = definedMetrics();
    const dashboard = readFileSync(join(monitoring, 'grafana-dashboard.json'), 'utf8');
    const alerts = readFileSync(join(monitoring, 'alerts.yml'), 'utf8');
    const unknown = [...referencedMetrics(dashboard), ...referencedMetrics(alerts)].filter(
      (n) => !defined.has(n),
    );
    expect(unknown).toEqual([]);
  });

  it('every dashboard panel has a query', () => {
    const dashboard = JSON.parse(readFileSync(join(monitoring, 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr?: string }[] }[];
    };
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels) expect(panel.targets?.[0]?.expr, panel.title).toBeTruthy();
  });
});
