/**
 * The cost of the hop between api nodes of writers split by company (api/README.md, "Writers split
 * by company"): the same list page asked of the company's owner directly and through another
 * writer's api, which forwards it in one hop, in the same run.
 *
 *   pnpm --filter @pda/bench exec node api/hop.ts [--sites 10000] [--duration 10] [--warmup 3]
 *
 * Inputs: api/list.ts's fixture (one company of N sites, one key; built once under .data/bench/).
 * Two api processes on loopback read the same data directory (both have every key, as split
 * writers do) with one ownership file: `owner` serves the company's partition, `other` the rest.
 * For each path (direct to owner, through other) and each load: `GET /v1/sites?limit=50`, sequential
 * (1 connection: the latency a partner sees) and saturated (10 connections: what the node pair
 * sustains). On one 2-core machine the forwarding api, the owner and autocannon share the cores,
 * so the saturated ratio is the CPU the hop adds, not a network's cost.
 * Prints one JSON document on stdout; writes bench/results/api-hop-<date>.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { companyPartition } from '@pda/projections/model';
import { freePort } from '@pda/projections/testing';
import { listFixture } from '../shared/api-fixture.ts';
import { type Measurement, measure } from '../shared/api-measure.ts';
import { answersHealth, benchApiEnv, type Server, startServer } from '../shared/api-processes.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
  },
});
const sites = Number(args.sites);
const durationSeconds = Number(args.duration);
const warmupSeconds = Number(args.warmup);
const log = (line: string) => process.stderr.write(`api-hop: ${line}\n`);

async function main() {
  const loadStart = loadavg();
  const fixture = listFixture(join(repoRoot, '.data', 'bench'), sites);
  const scratch = mkdtempSync(join(tmpdir(), 'bench-api-hop-'));
  const servers: Server[] = [];
  try {
    const [ownerPort, otherPort] = [await freePort(), await freePort()];
    const partition = companyPartition(fixture.companyId, 2);
    const ownership = join(scratch, 'ownership.json');
    writeFileSync(
      ownership,
      JSON.stringify({
        partitions: 2,
        writers: [
          { name: 'owner', api: `http://127.0.0.1:${ownerPort}`, serves: [partition] },
          { name: 'other', api: `http://127.0.0.1:${otherPort}`, serves: [1 - partition] },
        ],
      }),
    );
    const secret = join(scratch, 'secret');
    writeFileSync(secret, randomBytes(32).toString('hex'));
    const split = (name: string) => ({
      API_OWNERSHIP_FILE: ownership,
      API_WRITER_NAME: name,
      API_FORWARD_SECRET_FILE: secret,
      API_TRUST_PROXY: 'loopback',
    });
    const apiFile = join(repoRoot, 'api/src/main.ts');
    for (const [name, port] of [
      ['owner', ownerPort],
      ['other', otherPort],
    ] as const) {
      servers.push(
        await startServer(
          name,
          apiFile,
          port,
          benchApiEnv(fixture.dataDir, port, split(name)),
          answersHealth,
        ),
      );
    }
    const headers = { authorization: `Bearer ${fixture.key}` };
    const path = '/v1/sites?limit=50';
    const results: Measurement[] = [];
    for (const connections of [1, 10]) {
      for (const [label, base] of [
        ['direct to the owner', servers[0]?.base],
        ['through the other api (one hop)', servers[1]?.base],
      ] as const) {
        const m = await measure(`${label}, ${connections} connection(s)`, `${base}${path}`, headers, {
          connections,
          durationSeconds,
          warmupSeconds,
        });
        log(`${m.name}: ${m.requestsPerSecond} req/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms`);
        results.push(m);
      }
    }
    const date = new Date().toISOString().slice(0, 10);
    const document = {
      date,
      command: `node bench/api/hop.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: {
        cpu: cpus()[0]?.model.trim(),
        cores: cpus().length,
        node: process.version,
        loadAverage: { start: loadStart, end: loadavg() },
      },
      inputs: { sites, durationSeconds, warmupSeconds, path },
      results,
    };
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    const lines = [
      `# The hop between split writers' apis — ${date}`,
      '',
      `Command: \`${document.command}\``,
      '',
      `Machine: ${document.machine.cores} cores (${document.machine.cpu}), Node ${process.version}; load average ${loadStart[0]?.toFixed(2)} at the start, ${loadavg()[0]?.toFixed(2)} at the end. The owner's api, the forwarding api and autocannon share these cores on loopback.`,
      '',
      `Inputs: one company of ${sites} sites (api/list.ts's fixture), \`GET ${path}\`, ${durationSeconds} s per row after ${warmupSeconds} s of warm-up; the peer is the same request asked of the owner directly.`,
      '',
      '| path | req/s | mean ms (connections ÷ req/s) | p50 ms | p99 ms | non-2xx / errors |',
      '|---|---:|---:|---:|---:|---|',
      ...results.map(
        (m, i) =>
          `| ${m.name} | ${m.requestsPerSecond} | ${(((i < 2 ? 1 : 10) * 1000) / m.requestsPerSecond).toFixed(2)} | ${m.p50Ms} | ${m.p99Ms} | ${m.non2xx} / ${m.errors} |`,
      ),
      '',
      'autocannon gives latency percentiles in whole milliseconds; with one connection the mean (1,000 ÷ req/s) is the finer figure of what one request costs.',
      '',
    ];
    const dir = resultsDir;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `api-hop-${date}.md`);
    writeFileSync(file, lines.join('\n'));
    log(`report: ${file}`);
  } finally {
    for (const server of servers) await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
