// Two nodes behind a balancer (docs/deployment-replicas.md), all real processes on this machine:
// each node an `ingest` (its own consumer group and data directory: Kafka is the replication log)
// and an `api` on that directory; HAProxy (Debian package) on the configuration rendered from
// operator-tools/balancer/haproxy.cfg.template; a private redis-server holding the shared rate-limit budget.
// Under a steady paging load and a random writer in PostgreSQL, node A's api is killed (SIGKILL),
// then its ingest: requests keep succeeding through node B. Node A is restarted and comes back once
// its projections are fresh; the budget is enforced once across both nodes; both data directories
// then equal PostgreSQL. The measured figures go to .data/fault-campaign/replicas.json.
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { reconcile } from '@pda/operator-tools/reconcile';
import { freePort } from '@pda/projections/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseRecord } from './faults/support/result.ts';
import { type Balancer, type Redis, startBalancer, startRedis } from './src/balancer.ts';
import { type Answer, get, startPagingLoad } from './src/paging-load.ts';
import { seedCompany, writeRandomly } from './src/random-writer.ts';
import { issueKey } from './src/read-side.ts';
import { createNode, nodePorts, type ReplicaNode } from './src/replica-node.ts';
import { inTransaction, pgPool, waitFor } from './src/stack-env.ts';

/** Requests per window per key and per client address (API_RATE_LIMIT_MAX), window 60 s. */
const MAX = 600;
/** HAProxy connects to the nodes from this loopback address; the nodes trust only it. */
const BALANCER_ADDRESS = '127.0.0.9';
/** A node whose projections lag more than this is out of the balancer's rotation. */
const MAX_STALENESS_S = 20;
/** How long the writer runs: the whole kill / restart sequence happens inside it. */
const WRITE_MS = 45_000;

let pool: pg.Pool;
let redis: Redis;
let balancer: Balancer;
let a: ReplicaNode;
let b: ReplicaNode;
const company = randomUUID();
const other = randomUUID();
const pagingKeys: string[] = [];

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (fromMs: number) => Math.round((Date.now() - fromMs) / 100) / 10;

async function serverStatus(backend: string, server: string): Promise<string> {
  return (await balancer.servers()).find((s) => s.backend === backend && s.server === server)?.status ?? '?';
}

beforeAll(async () => {
  pool = pgPool();
  redis = await startRedis();
  const balancerPort = await freePort();
  const api = {
    API_CURSOR_SECRET: randomBytes(32).toString('hex'),
    API_PUBLIC_BASE_URL: `http://127.0.0.1:${balancerPort}`,
    API_REDIS_URL: redis.url,
    API_TRUST_PROXY: BALANCER_ADDRESS,
    API_RATE_LIMIT_MAX: String(MAX),
    API_RATE_LIMIT_WINDOW_MS: '60000',
    API_HEALTH_MAX_STALENESS_S: String(MAX_STALENESS_S),
    API_LOG_LEVEL: 'warn',
  };
  const ports = await nodePorts();
  a = createNode({ name: 'a', host: '127.0.0.11', ports, api });
  b = createNode({ name: 'b', host: '127.0.0.12', ports, api });
  // The ingests start reading every topic from the beginning while the test's data is written.
  for (const node of [a, b]) node.startIngest();

  await inTransaction(pool, [
    ["INSERT INTO companies (id, name, currency) VALUES ($1, 'Replicas e2e', 'USD')", [company]],
    ["INSERT INTO companies (id, name, currency) VALUES ($1, 'Replicas e2e (other)', 'USD')", [other]],
  ]);
  await seedCompany(pool, company, 40);
  await seedCompany(pool, other, 8);
  for (let i = 0; i < 3; i++)
    pagingKeys.push(await issueKey(pool, company, ['sites:read'], `replicas paging ${i}`));
  for (const node of [a, b]) node.startApi();
  balancer = await startBalancer({
    port: balancerPort,
    sourceAddress: BALANCER_ADDRESS,
    nodes: [a, b].map((n) => ({ name: `node-${n.name}`, host: n.host })),
    ports,
  });
  // Each node has read every topic from the beginning (the keys included) and is fresh.
  const started = Date.now();
  const took: string[] = [];
  for (const node of [a, b]) {
    await waitFor(
      `node ${node.name}'s ingest caught up`,
      async () => (await fetch(node.readyUrl)).status === 200,
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    took.push(`${node.name}: ingest caught up at ${seconds(started)} s`);
  }
  for (const node of [a, b]) {
    await waitFor(
      `node ${node.name} to know the keys and be in rotation`,
      async () => {
        for (const key of pagingKeys) {
          if ((await get(`${node.apiUrl}/v1/me`, { headers: bearer(key) })).status !== 200) return false;
        }
        return (await serverStatus('api_fresh', `node-${node.name}`)) === 'UP';
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    took.push(`${node.name}: in rotation at ${seconds(started)} s`);
  }
  console.log(`replicas: started (${took.join(', ')})`);
}, 300_000);

afterAll(async () => {
  await balancer?.stop();
  for (const node of [a, b]) {
    await node?.stopApi('SIGTERM');
    await node?.stopIngest('SIGTERM');
    if (node) rmSync(node.dataDir, { recursive: true, force: true });
  }
  await redis?.stop();
  await pool?.end();
});

describe('client addresses behind the balancer (API_TRUST_PROXY)', () => {
  const remaining = (answer: Answer) => Number(answer.headers['ratelimit-remaining']);

  it('meters health and version per client address, not per balancer, whichever node answers', async () => {
    const via = (localAddress: string) => get(`${balancer.url}/v1/version`, { localAddress });
    const first = await via('127.0.0.5');
    const second = await via('127.0.0.5');
    const otherClient = await via('127.0.0.6');
    expect([first.status, second.status, otherClient.status]).toEqual([200, 200, 200]);
    // Round robin: the two requests of 127.0.0.5 went to different nodes, one budget in Redis.
    expect(new Set([first.headers['x-pda-node'], second.headers['x-pda-node']]).size).toBe(2);
    expect([remaining(first), remaining(second), remaining(otherClient)]).toEqual([
      MAX - 1,
      MAX - 2,
      MAX - 1,
    ]);
    const health = await get(`${balancer.url}/v1/health`, { localAddress: '127.0.0.6' });
    expect(health.status).toBe(200);
    expect(remaining(health)).toBe(MAX - 2);
  });

  it('ignores an X-Forwarded-For that does not come from the balancer', async () => {
    const spoofed = { 'x-forwarded-for': '203.0.113.7' };
    // Straight to node B from an address it does not trust: its own address is metered.
    const direct = await get(`${b.apiUrl}/v1/version`, { headers: spoofed, localAddress: '127.0.0.7' });
    const again = await get(`${b.apiUrl}/v1/version`, { headers: spoofed, localAddress: '127.0.0.7' });
    expect([remaining(direct), remaining(again)]).toEqual([MAX - 1, MAX - 2]);
    // Through the balancer, which appends the address it saw: the client's own entry is ignored.
    const through = await get(`${balancer.url}/v1/version`, { headers: spoofed, localAddress: '127.0.0.8' });
    expect(remaining(through)).toBe(MAX - 1);
    // The spoofed address's budget was never spent: the first time a trusted hop reports it.
    const trusted = await get(`${b.apiUrl}/v1/version`, { headers: spoofed, localAddress: BALANCER_ADDRESS });
    expect(remaining(trusted)).toBe(MAX - 1);
  });
});

describe('a node dies under load and comes back', () => {
  it('keeps answering through the other node, enforces one budget, and both nodes equal PostgreSQL', async () => {
    // Recorded from the start, so a run that fails before its figures never leaves an old success.
    const record = caseRecord('replicas');
    const load = startPagingLoad({ baseUrl: balancer.url, keys: pagingKeys });
    const writing = writeRandomly(pool, { company, other }, { ms: WRITE_MS, pauseMs: 40 });
    const timeline: string[] = [];

    await waitFor(
      'both nodes answering the load',
      () => load.answeredBy('node-a', 0) > 5 && load.answeredBy('node-b', 0) > 5,
      {
        timeoutMs: 30_000,
      },
    );

    // Node A's api crashes; the balancer retries what it held and sends the rest to node B.
    const killedAt = Date.now();
    await a.stopApi('SIGKILL');
    await waitFor(
      'node A marked down',
      async () => (await serverStatus('api_fresh', 'node-a')).startsWith('DOWN'),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
    const markedDownS = seconds(killedAt);
    timeline.push(`api killed, balancer marked it down after ${markedDownS} s`);
    await sleep(2_000);
    await a.stopIngest('SIGKILL');
    const ingestKilledAt = Date.now();
    await sleep(8_000);
    expect(load.answeredBy('node-a', killedAt + markedDownS * 1000 + 1_000)).toBe(0);
    expect(load.answeredBy('node-b', ingestKilledAt)).toBeGreaterThan(10);

    // Node A comes back: in rotation again only once its projections are fresh.
    const restartedAt = Date.now();
    a.startIngest();
    a.startApi();
    await waitFor(
      'node A to answer on its port',
      async () => (await get(`${a.apiUrl}/v1/version`)).status === 200,
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    const apiUpS = seconds(restartedAt);
    await waitFor('node A ingest ready', async () => (await fetch(a.readyUrl)).status === 200, {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const ingestReadyS = seconds(restartedAt);
    await waitFor(
      'node A back in rotation',
      async () => (await serverStatus('api_fresh', 'node-a')) === 'UP',
      {
        timeoutMs: 120_000,
        intervalMs: 100,
      },
    );
    const recoverySeconds = seconds(restartedAt);
    timeline.push(
      `restarted: api listening after ${apiUpS} s, ingest caught up after ${ingestReadyS} s, back in rotation after ${recoverySeconds} s`,
    );
    await waitFor('node A answering the load again', () => load.answeredBy('node-a', restartedAt) > 0, {
      timeoutMs: 30_000,
    });

    // One budget across both nodes: a key spending past it gets 429s with the limit headers from
    // either node, and every answer within the budget counted once (distinct remainders, exactly
    // the budget left: a budget counted per process would allow up to twice as many).
    const budgetKey = await issueKey(pool, company, ['sites:read'], 'replicas budget');
    // The key reaches each node's control.sqlite through Kafka. Asking spends its budget once per
    // node that knows it (a node that does not yet answers 401, metered by address).
    let spentBefore = 0;
    await waitFor('the budget key applied on both nodes', async () => {
      const answers = await Promise.all(
        [a, b].map((n) => get(`${n.apiUrl}/v1/me`, { headers: bearer(budgetKey) })),
      );
      spentBefore += answers.filter((x) => x.status === 200).length;
      return answers.every((x) => x.status === 200);
    });
    const burst: Answer[] = [];
    const once = () => get(`${balancer.url}/v1/me`, { headers: bearer(budgetKey) });
    for (let sent = 0; sent < MAX + 60; sent += 10)
      burst.push(...(await Promise.all(Array.from({ length: 10 }, once))));
    const ok = burst.filter((x) => x.status === 200);
    const limited = burst.filter((x) => x.status === 429);
    expect(ok.length + limited.length).toBe(burst.length);
    // Never more than the budget (a budget counted per node would allow up to twice as much). A
    // request the balancer retried on the other node after the first had counted it is counted
    // twice, so a few fewer answers are allowed (one in a run on a loaded machine: 597 of 598).
    expect(ok.length).toBeLessThanOrEqual(MAX - spentBefore);
    expect(ok.length).toBeGreaterThanOrEqual(MAX - spentBefore - 3);
    const remainders = ok.map((x) => Number(x.headers['ratelimit-remaining']));
    expect(new Set(remainders).size).toBe(ok.length);
    expect(Math.max(...remainders)).toBeLessThan(MAX - spentBefore);
    expect(new Set(ok.map((x) => x.headers['x-pda-node']))).toEqual(new Set(['node-a', 'node-b']));
    expect(new Set(limited.map((x) => x.headers['x-pda-node']))).toEqual(new Set(['node-a', 'node-b']));
    for (const answer of limited) {
      expect(answer.headers['ratelimit-limit']).toBe(String(MAX));
      expect(answer.headers['ratelimit-remaining']).toBe('0');
      const retryAfter = Number(answer.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(Number(answer.headers['ratelimit-reset'])).toBe(retryAfter);
      expect(JSON.parse(answer.body).code).toBe('rate_limit_exceeded');
    }
    timeline.push(
      `budget of ${MAX}: ${spentBefore} spent before, the burst got ${ok.length} answers, then ${limited.length} × 429 from both nodes`,
    );

    const written = await writing;
    const summary = await load.stop();

    // Both data directories equal PostgreSQL (reconcile: every company of the source and of the
    // node; rows still in flight are read again until they settle).
    const reconciled: Record<string, string> = {};
    let differences = 0;
    for (const node of [a, b]) {
      const report = await reconcile({ pg: pool, dataDir: node.dataDir, waitMs: 60_000 });
      const found = report.totals.differences + report.totals.unsettled;
      differences += found;
      reconciled[node.name] =
        `${report.totals.companies} companies, ${report.totals.sourceRows} rows, ${found} differences in ${(report.durationMs / 1000).toFixed(1)} s`;
      if (found > 0)
        console.error(
          `node ${node.name}: ${JSON.stringify([...report.differences, ...report.unsettled].slice(0, 20))}`,
        );
    }
    const retried = balancer.retried();
    console.log(
      `replicas: balancer events:\n${balancer.events().join('\n')}\nretried:\n${retried.join('\n')}`,
    );
    const changes = Object.values(written.committed).reduce((sum, n) => sum + n, 0);
    // The campaign's record (docs/resilience.md), one JSON line.
    record.set({
      fault: 'one of two nodes behind HAProxy: its api killed (SIGKILL), then its ingest; both restarted',
      whatHappened:
        `${summary.requests} paging requests from ${pagingKeys.length} clients (${JSON.stringify(summary.byNode)}), ` +
        `${summary.failed} failed, ${retried.length} retried by the balancer; ${timeline.join('; ')}; ` +
        `${changes} changes written meanwhile; reconcile: ${JSON.stringify(reconciled)}`,
      recoverySeconds,
      differences,
      failedRequests: summary.failed,
    });

    expect(summary.failures).toEqual([]);
    expect(differences).toBe(0);
  });
});

describe('when no node is fresh', () => {
  it('any node whose api is alive answers: stale data rather than none', async () => {
    // Both ingests stopped: as if the source or Debezium stalled for every node at once.
    await Promise.all([a.stopIngest('SIGTERM'), b.stopIngest('SIGTERM')]);
    await waitFor(
      'both nodes out of the fresh rotation',
      async () =>
        (await balancer.servers())
          .filter((s) => s.backend === 'api_fresh')
          .every((s) => s.status.startsWith('DOWN')),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) {
      answers.push(await get(`${balancer.url}/v1/sites?limit=5`, { headers: bearer(pagingKeys[0]!) }));
    }
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((x) => x.headers['x-pda-node']))).toEqual(new Set(['node-a', 'node-b']));
  });
});
