/**
 * api list benchmark (NOT a test; docs/architecture.md#performance-targets): a list page of 50 at
 * page 1 and page 20,000 of a 1,000,000-site company, and an item read; targets p99 < 10 ms,
 * page 20,000 as fast as page 1, ≥ 5,000 req/s on this 2-core machine.
 *
 *   pnpm --filter @pda/bench exec node api/list.ts [--sites 1000000] [--page 20000] [--limit 50]
 *     [--connections 10] [--duration 10] [--warmup 3] [--rate 1000] [--no-pg]
 *     [--also-env API_READ_THREADS=2] [--out results/<file>.md]
 *
 * Builds (once, cached under .data/bench/) a projection file with one company of N sites, starts the
 * api on it in its own process, follows links to the deep page's cursor, then measures with
 * autocannon: list page 1, list page P, item as fast as the api answers, the two list pages again at a
 * fixed rate (latency below saturation); and in the same run the peers: the same pages from
 * PostgreSQL with OFFSET (the stack's PostgreSQL, <stack dir>/env; skipped with --no-pg or when it is not
 * reachable) and the deep page's bytes from a bare node http server. Writes
 * bench/results/api-<date>.md and prints it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { ensurePgSites } from '../peers/api-pg-data.ts';
import { listFixture } from '../shared/api-fixture.ts';
import { type LoadOptions, type Measurement, measure } from '../shared/api-measure.ts';
import { answersHealth, printedReady, type Server, startServer } from '../shared/api-processes.ts';
import { benchDir, repoRoot, resultsDir } from '../shared/paths.ts';
import { readStackEnv, stackPgClient } from '../shared/stack-env.ts';
import { measurePacedWithWrk, wrkAvailable } from './parts/measure-wrk.ts';
import { renderReport } from './parts/report.ts';
import { walkToPage } from './parts/walk.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '1000000' },
    page: { type: 'string', default: '20000' },
    limit: { type: 'string', default: '50' },
    connections: { type: 'string', default: '10' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    rate: { type: 'string', default: '1000' },
    'no-pg': { type: 'boolean', default: false },
    // A peer api with settings of its own (NAME=VALUE, repeatable), measured on the same pages.
    'also-env': { type: 'string', multiple: true },
    out: { type: 'string' },
  },
});
const alsoEnv: Record<string, string> = Object.fromEntries(
  (args['also-env'] ?? []).map((setting) => {
    const at = setting.indexOf('=');
    if (at < 1) throw new Error(`--also-env takes NAME=VALUE, not ${setting}`);
    return [setting.slice(0, at), setting.slice(at + 1)];
  }),
);
const sites = Number(args.sites);
const page = Number(args.page);
const limit = Number(args.limit);
const load: LoadOptions = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration),
  warmupSeconds: Number(args.warmup),
};
if (
  ![sites, page, limit, load.connections, load.durationSeconds].every((n) => Number.isInteger(n) && n > 0)
) {
  throw new Error('--sites, --page, --limit, --connections and --duration must be positive integers');
}
if ((page - 1) * limit >= sites) throw new Error(`page ${page} of ${limit} is past the ${sites} sites`);

const repo = repoRoot;
const log = (line: string) => process.stderr.write(`api-list: ${line}\n`);

log(`projection with ${sites} sites (built once, then cached under .data/bench/)`);
const fixture = listFixture(join(repo, '.data', 'bench'), sites);
const fileMiB = Math.round(
  statSync(join(fixture.dataDir, 'companies', `${fixture.companyId}.sqlite`)).size / 2 ** 20,
);
const auth = { authorization: `Bearer ${fixture.key}` };
const servers: Server[] = [];
const rows: Measurement[] = [];
const notes: string[] = [];
let pgLoadSeconds: number | undefined;

// One cursor secret for every api of the run: the deep page's cursor is valid on each.
const cursorSecret = randomBytes(32).toString('hex');
async function startApi(name: string, env: Record<string, string>): Promise<Server> {
  const apiPort = await freePort();
  const api = await startServer(
    name,
    join(repo, 'api', 'src', 'main.ts'),
    apiPort,
    {
      API_DATA_DIR: fixture.dataDir,
      API_HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      API_PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
      API_CURSOR_SECRET: cursorSecret,
      API_RATE_LIMIT_MAX: '1000000000',
      // Throughput of one key over 10 connections: its fair shares (8 in progress) out of the way too.
      API_MAX_IN_PROGRESS_PER_KEY: '0',
      API_MAX_IN_PROGRESS_PER_COMPANY: '0',
      API_LOG_LEVEL: 'warn',
      // Two apis may run at once (the peer of --also-env): each its own admin port.
      API_ADMIN_PORT: '0',
      ...env,
    },
    answersHealth,
  );
  servers.push(api);
  return api;
}

try {
  const api = await startApi('api', {});

  log(`following links to page ${page}`);
  const walk = await walkToPage(api.base, auth, page, limit);
  const deepIds = walk.ids;
  const deepFile = join(repo, '.data', 'bench', `page-${page}.json`);
  writeFileSync(deepFile, walk.body);

  log('measuring the api');
  const loadBefore = loadavg()[0] ?? 0;
  rows.push(await measure('api: list page 1', `${api.base}/v1/sites?limit=${limit}`, auth, load));
  rows.push(await measure(`api: list page ${page}`, walk.url, auth, load));
  rows.push(await measure('api: item', `${api.base}/v1/sites/${fixture.middleSiteId}`, auth, load));
  // What partners add: relations, sparse fieldsets (the parse-and-trim path), compression.
  const firstPage = `${api.base}/v1/sites?limit=${limit}`;
  rows.push(await measure('api: list page 1 include=contacts', `${firstPage}&include=contacts`, auth, load));
  rows.push(
    await measure(
      'api: list page 1 fields[sites]=id,name,address',
      `${firstPage}&fields[sites]=id,name,address`,
      auth,
      load,
    ),
  );
  rows.push(await measure('api: list page 1 gzip', firstPage, { ...auth, 'accept-encoding': 'gzip' }, load));
  rows.push(await measure('api: list page 1 br', firstPage, { ...auth, 'accept-encoding': 'br' }, load));
  // Latency below saturation: the same requests at a fixed rate (a saturated server's p99 is queueing).
  const paced = { ...load, rate: Number(args.rate) };
  rows.push(
    await measure(
      `api: list page 1 at ${paced.rate} req/s`,
      `${api.base}/v1/sites?limit=${limit}`,
      auth,
      paced,
    ),
  );
  rows.push(await measure(`api: list page ${page} at ${paced.rate} req/s`, walk.url, auth, paced));
  // The same fixed rate from a lighter load generator (api/parts/measure-wrk.ts), when wrk is installed.
  const withWrk = wrkAvailable();
  if (withWrk) {
    rows.push(
      await measurePacedWithWrk(`api: list page 1 at ${paced.rate} req/s (wrk)`, firstPage, auth, paced),
    );
    rows.push(
      await measurePacedWithWrk(`api: list page ${page} at ${paced.rate} req/s (wrk)`, walk.url, auth, paced),
    );
  } else {
    notes.push('wrk rows skipped: wrk is not installed (apt-get install wrk).');
  }

  if (Object.keys(alsoEnv).length > 0) {
    // The peer api after the default one, on the same pages (its own base URL, the same cursor).
    const label = Object.entries(alsoEnv)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    const peerApi = await startApi(`api ${label}`, alsoEnv);
    const deepUrl = walk.url.replace(api.base, peerApi.base);
    log(`measuring the api with ${label}`);
    rows.push(
      await measure(`api ${label}: list page 1`, `${peerApi.base}/v1/sites?limit=${limit}`, auth, load),
    );
    rows.push(await measure(`api ${label}: list page ${page}`, deepUrl, auth, load));
    rows.push(
      await measure(
        `api ${label}: list page 1 include=contacts`,
        `${peerApi.base}/v1/sites?limit=${limit}&include=contacts`,
        auth,
        load,
      ),
    );
    rows.push(
      await measure(
        `api ${label}: list page 1 at ${paced.rate} req/s`,
        `${peerApi.base}/v1/sites?limit=${limit}`,
        auth,
        paced,
      ),
    );
    if (withWrk) {
      rows.push(
        await measurePacedWithWrk(
          `api ${label}: list page 1 at ${paced.rate} req/s (wrk)`,
          `${peerApi.base}/v1/sites?limit=${limit}`,
          auth,
          paced,
        ),
      );
    }
    await peerApi.stop();
    servers.splice(servers.indexOf(peerApi), 1);
  }

  const pgEnv = readStackEnv();
  if (args['no-pg'] || pgEnv.PDA_PG_HOST === undefined) {
    notes.push('PostgreSQL peer skipped (--no-pg or no <stack dir>/env).');
  } else {
    const client = stackPgClient();
    await client.connect();
    try {
      log('loading the PostgreSQL peer table (once)');
      pgLoadSeconds = await ensurePgSites(client, fixture.seed, sites);
    } finally {
      await client.end();
    }
    const peerPort = await freePort();
    const peer = await startServer(
      'pg peer',
      join(benchDir, 'peers', 'api-pg.ts'),
      peerPort,
      { ...pgEnv, PEER_PORT: String(peerPort), PEER_COMPANY_ID: fixture.companyId },
      printedReady,
    );
    servers.push(peer);
    const offset = (page - 1) * limit;
    const same = (await (await fetch(`${peer.base}/sites?offset=${offset}&limit=${limit}`)).json()) as {
      data: { id: string }[];
    };
    const equal = same.data.map((row) => row.id).join() === deepIds.join();
    notes.push(
      `PostgreSQL's OFFSET ${offset} page ${equal ? 'has exactly the ids' : '**differs from**'} of the api's page ${page}.`,
    );
    log('measuring the PostgreSQL peer');
    rows.push(
      await measure('peer: PostgreSQL OFFSET page 1', `${peer.base}/sites?offset=0&limit=${limit}`, {}, load),
    );
    rows.push(
      await measure(
        `peer: PostgreSQL OFFSET page ${page}`,
        `${peer.base}/sites?offset=${offset}&limit=${limit}`,
        {},
        load,
      ),
    );
  }

  const staticPort = await freePort();
  const staticPeer = await startServer(
    'static peer',
    join(benchDir, 'peers', 'api-static.ts'),
    staticPort,
    { PEER_PORT: String(staticPort), PEER_FILE: deepFile },
    printedReady,
  );
  servers.push(staticPeer);
  log('measuring the static peer');
  rows.push(await measure(`peer: static bytes of page ${page}`, `${staticPeer.base}/`, {}, load));
  // The same fixed rate against the peer: the tail the load generator and the machine add by
  // themselves, to tell apart from the api's own (bench/README.md, api).
  rows.push(await measure(`peer: static bytes at ${paced.rate} req/s`, `${staticPeer.base}/`, {}, paced));
  if (withWrk) {
    rows.push(
      await measurePacedWithWrk(
        `peer: static bytes at ${paced.rate} req/s (wrk)`,
        `${staticPeer.base}/`,
        {},
        paced,
      ),
    );
  }

  const date = new Date().toISOString().slice(0, 10);
  const report = renderReport(
    date,
    {
      sites,
      page,
      limit,
      ...load,
      projectionFileMiB: fileMiB,
      fixtureBuildSeconds: fixture.buildSeconds,
      walkSeconds: walk.seconds,
      walkRequests: walk.requests,
      pgLoadSeconds,
      loadBefore,
      notes,
    },
    rows,
  );
  mkdirSync(resultsDir, { recursive: true });
  const out = args.out ?? join(resultsDir, `api-${date}.md`);
  writeFileSync(out, report);
  process.stdout.write(report);
  log(`written to ${out}`);
} finally {
  for (const server of servers.reverse()) await server.stop();
}
