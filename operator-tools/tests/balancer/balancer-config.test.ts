import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@pda/projections/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { BalancerConfigError, renderHaproxyConfig } from '../../balancer/haproxy-config.ts';
import { runOpsCli } from '../../testing/cli-process.ts';

// The balancer's configuration (docs/deployment-replicas.md): rendered from the template, checked by
// the real haproxy (Debian package, installed by scripts/test.sh) with `haproxy -c`.

const dir = mkdtempSync(join(tmpdir(), 'pda-balancer-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TWO_NODES = {
  bind: '127.0.0.1:18080',
  statsBind: '127.0.0.1:18404',
  nodes: [
    { name: 'node-a', host: '10.0.0.11' },
    { name: 'node-b', host: '10.0.0.12' },
  ],
  ports: { apiPort: 8080, apiAdminPort: 9465, ingestAdminPort: 9464 },
};

function haproxyCheck(config: string): string {
  const file = join(dir, `haproxy-${Math.random().toString(36).slice(2)}.cfg`);
  writeFileSync(file, config);
  try {
    return execFileSync('haproxy', ['-c', '-f', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: string; stdout?: string; stderr?: string };
    if (code === 'ENOENT')
      throw new Error('haproxy not found: apt-get install haproxy (scripts/test.sh does)');
    throw new Error(`haproxy -c rejected the configuration:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

describe('renderHaproxyConfig', () => {
  test('one server line per node in both backends; the source line only when asked; haproxy accepts it', () => {
    const config = renderHaproxyConfig(TWO_NODES);
    const servers = config.split('\n').filter((line) => line.trim().startsWith('server '));
    expect(servers.map((line) => line.trim())).toEqual([
      'server node-a 10.0.0.11:8080 check',
      'server node-b 10.0.0.12:8080 check',
      'server node-a 10.0.0.11:8080 check',
      'server node-b 10.0.0.12:8080 check',
    ]);
    const directives = config.split('\n').filter((line) => !line.trim().startsWith('#'));
    expect(directives.filter((line) => /\{\{|^\s*source/.test(line))).toEqual([]);
    expect(haproxyCheck(config)).toMatch(/Configuration file is valid/);

    const withSource = renderHaproxyConfig({ ...TWO_NODES, sourceAddress: '10.0.0.5' });
    expect(withSource.match(/^\s*source 10\.0\.0\.5$/gm)).toHaveLength(2);
    expect(haproxyCheck(withSource)).toMatch(/Configuration file is valid/);
  });

  test('the retry and health rules the recipe documents', () => {
    const config = renderHaproxyConfig(TWO_NODES);
    expect(config).toContain('retry-on conn-failure empty-response response-timeout 503');
    expect(config).toContain('http-request disable-l7-retry unless METH_GET');
    // In rotation: the api fresh AND its ingest caught up; the fallback: the api process alive.
    expect(config).toMatch(
      /http-check send meth GET uri \/v1\/health\n\s+http-check expect status 200\n\s+http-check connect port 9464\n\s+http-check send meth GET uri \/readyz\n/,
    );
    expect(config).toMatch(/http-check connect port 9465\n\s+http-check send meth GET uri \/healthz\n/);
    expect(config).toContain('option forwardfor');
  });

  test('the access log has the path without its query string: a key or cursor put there never reaches it', async () => {
    const config = renderHaproxyConfig(TWO_NODES);
    expect(config).not.toMatch(/^\s*option httplog/m);
    const logFormat = config.split('\n').find((line) => line.trim().startsWith('log-format '));
    expect(logFormat).toContain('%HPO');
    expect(logFormat).not.toMatch(/%\{[^}]*\}r|%r\b|%HU|%HQ|%HP\b/);
    expect(haproxyCheck(config)).toMatch(/Configuration file is valid/);

    // The real haproxy with this configuration, its nodes down: it answers 503 and logs the request.
    const [bind, stats] = await Promise.all([freePort(), freePort()]);
    const file = join(dir, 'haproxy-log.cfg');
    writeFileSync(
      file,
      renderHaproxyConfig({
        ...TWO_NODES,
        bind: `127.0.0.1:${bind}`,
        statsBind: `127.0.0.1:${stats}`,
        nodes: [{ name: 'node-a', host: '127.0.0.1' }],
        ports: { apiPort: await freePort(), apiAdminPort: 9465, ingestAdminPort: 9464 },
      }),
    );
    const haproxy = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    haproxy.stdout.setEncoding('utf8').on('data', (text: string) => {
      log += text;
    });
    try {
      const url = `http://127.0.0.1:${bind}/v1/sites?api_key=svc_pk_secret&cursor=eyJzb3J0Ijoi`;
      let status = 0;
      for (let i = 0; i < 50 && status === 0; i++) {
        status = await fetch(url).then(
          (response) => response.status,
          () => 0,
        );
        if (status === 0) await sleep(100);
      }
      expect(status).toBe(503);
      for (let i = 0; i < 50 && !log.includes('"GET /v1/sites HTTP/1.1"'); i++) await sleep(100);
      expect(log).toMatch(/ 503 \d+ .*"GET \/v1\/sites HTTP\/1\.1"\n/);
      expect(log).not.toContain('svc_pk_secret');
      expect(log).not.toContain('eyJzb3J0Ijoi');
    } finally {
      haproxy.kill('SIGTERM');
    }
  });

  test('bad input is refused with every problem named', () => {
    expect(() => renderHaproxyConfig({ ...TWO_NODES, nodes: [] })).toThrow(BalancerConfigError);
    expect(() =>
      renderHaproxyConfig({
        ...TWO_NODES,
        bind: 'everywhere',
        sourceAddress: 'balancer.local',
        nodes: [
          { name: 'a b', host: '10.0.0.1' },
          { name: 'c', host: 'x;y' },
        ],
        ports: { apiPort: 0, apiAdminPort: 9465, ingestAdminPort: 70_000 },
      }),
    ).toThrow(
      /node name "a b".*node c: host "x;y".*apiPort 0.*ingestAdminPort 70000.*bind "everywhere".*source address "balancer.local"/,
    );
  });
});

describe('balancer-config CLI', () => {
  test('prints the configuration; bad arguments exit 2 with the usage', async () => {
    const ok = await runOpsCli('balancer', [
      '--bind',
      '0.0.0.0:8080',
      '--node',
      'a=10.0.0.11',
      '--node',
      'b=[fd00::12]',
      '--api-port',
      '18080',
      '--source',
      '10.0.0.5',
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('server b [fd00::12]:18080 check');
    expect(haproxyCheck(ok.stdout)).toMatch(/Configuration file is valid/);

    const bad = await runOpsCli('balancer', ['--bind', '0.0.0.0:8080', '--node', '10.0.0.11']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --node "10.0.0.11": expected NAME=HOST/);
    expect(bad.stderr).toContain('usage:');
  });
});
