/**
 * Since-page benchmark (NOT a test; bench/README.md, "since-pages"): a 50-row page of a
 * 1,000,000-site company with filter[updated_since] matching 0, 100, 1 %, 10 % and all sites,
 * against the unfiltered page of the same sort and depth measured in the same run (the target:
 * at most 2× it; projections/README.md, "Pages with a since").
 *
 *   pnpm --filter @pda/bench exec node api-since.ts [--sites 1000000] [--budget-ms 800]
 *     [--before-repo /path/to/checkout] [--no-http] [--duration 3] [--connections 10]
 *
 * Inputs (built once, cached under .data/bench/; bench/api-since-fixture.ts): api-list's company
 * as it is (change times follow created_at: the clustered worst case) and a copy with shuffled
 * change times plus tombstones. Measures, on the shuffled copy unless said:
 * 1. readPage in this process, every sort, page 1 and a page from the middle of the answer:
 *    µs per page (median), the unfiltered peer, and the old statement for id and name
 *    (bench/api-since-before.ts); the clustered file for the sorts its change times follow;
 *    readDeletions before and after.
 * 2. the api in its own process (api/src/main.ts, overlap 0 so the since is exact): sequential
 *    ms for default sort and sort=name, deep pages reached by following links.next; with
 *    --before-repo the same against that checkout's api (e.g. the commit before the plans,
 *    `git archive <commit> | tar -x -C <dir>` and `pnpm install --offline` there); then page 1
 *    under autocannon.
 * Writes bench/results/api-since-<date>.md and prints it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { type LoadOptions, type Measurement, measure } from './api-measure.ts';
import { answersHealth, benchApiEnv, type Server, startServer } from './api-processes.ts';
import {
  ensureTombstones,
  SHUFFLED_BASE_US,
  sinceFixture,
  TOMBSTONES_PER_TABLE,
} from './api-since-fixture.ts';
import { deepUrl, type HttpRow, sequential } from './api-since-http.ts';
import {
  type CrossoverRow,
  type DeletionsRow,
  measureCrossovers,
  measureDeletions,
  PageBench,
  type PageRow,
  SORTS,
} from './api-since-pages.ts';
import { renderSinceReport } from './api-since-report.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '1000000' },
    'budget-ms': { type: 'string', default: '800' },
    'before-repo': { type: 'string' },
    'no-http': { type: 'boolean', default: false },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
  },
});
const sites = Number(args.sites);
const budgetMs = Number(args['budget-ms']);
if (!Number.isInteger(sites) || sites < 1000) throw new Error('--sites must be an integer >= 1000');
const repo = join(import.meta.dirname, '..');
const log = (line: string) => process.stderr.write(`api-since: ${line}\n`);

log(`inputs for ${sites} sites (built once, then cached under .data/bench/)`);
const fixture = sinceFixture(join(repo, '.data', 'bench'), sites);
ensureTombstones(fixture);
const percent = (share: number) => Math.round(sites * share);
const MATCHING = [0, 100, percent(0.01), percent(0.1), sites];
const timing = { maxCalls: 300, budgetMs, minCalls: 5 };
/** filter[updated_since] matching exactly `matching` sites of the shuffled copy (change times 1 ms apart). */
const sinceIso = (matching: number) =>
  new Date((SHUFFLED_BASE_US + (sites - matching) * 1000) / 1000).toISOString();
const loadBefore = loadavg()[0] ?? 0;
const notes: string[] = [];

log('readPage, shuffled change times');
const pages: PageRow[] = [];
const deletions: DeletionsRow[] = [];
const crossovers: CrossoverRow[] = [];
const shuffled = new PageBench('shuffled', fixture.shuffled.dataDir, fixture.shuffled.companyId, timing);
try {
  for (const sort of SORTS) {
    for (const matching of MATCHING) {
      for (const page of ['first', 'deep'] as const) {
        if (page === 'deep' && matching < 2) continue;
        const withBefore = sort.label === 'id' || sort.label === 'name';
        pages.push(shuffled.measure(sort, matching, page, withBefore));
        log(JSON.stringify(pages.at(-1)));
      }
    }
  }
  log('plans forced around the thresholds');
  const root = Math.sqrt(51 * sites);
  const at = (factors: readonly number[]) => factors.map((x) => Math.min(sites, Math.round(x * root)));
  crossovers.push(...measureCrossovers(shuffled, SORTS[0]!, at([1, 2, 4, 6, 8, 12])));
  for (const sort of [SORTS[2]!, SORTS[4]!]) {
    crossovers.push(...measureCrossovers(shuffled, sort, at([0.2, 1 / 3, 0.5, 1, 2, 3, 4])));
  }
  for (const row of crossovers) log(JSON.stringify(row));
  log('readDeletions');
  for (const matching of [
    0,
    100,
    TOMBSTONES_PER_TABLE / 100,
    TOMBSTONES_PER_TABLE / 10,
    TOMBSTONES_PER_TABLE,
  ]) {
    for (const page of ['first', 'deep'] as const) {
      if (page === 'deep' && matching < 2) continue;
      deletions.push(measureDeletions(shuffled, matching, page));
      log(JSON.stringify(deletions.at(-1)));
    }
  }
} finally {
  shuffled.close();
}

log('readPage, clustered change times');
const clustered: PageRow[] = [];
const worst = new PageBench('clustered', fixture.clustered.dataDir, fixture.clustered.companyId, timing);
try {
  for (const sort of SORTS.filter((s) =>
    ['created_at', '-created_at', 'updated_at', 'id', 'name'].includes(s.label),
  )) {
    for (const matching of MATCHING.slice(1, -1)) {
      for (const page of ['first', 'deep'] as const) {
        clustered.push(worst.measure(sort, matching, page, sort.label === 'created_at'));
        log(JSON.stringify(clustered.at(-1)));
      }
    }
  }
} finally {
  worst.close();
}

const http: HttpRow[] = [];
const throughput: { sort: string; matching: number; row: Measurement; peer: Measurement }[] = [];
if (args['no-http']) {
  notes.push('HTTP rows skipped (--no-http).');
} else {
  const auth = { authorization: `Bearer ${fixture.shuffled.key}` };
  const secret = randomBytes(32).toString('hex');
  const apis: [string, string][] = [['after', repo]];
  const beforeRepo = args['before-repo'];
  if (beforeRepo !== undefined) {
    if (!existsSync(join(beforeRepo, 'api', 'src', 'main.ts')))
      throw new Error(`${beforeRepo}: no api/src/main.ts`);
    apis.push(['before', beforeRepo]);
  } else {
    notes.push('HTTP "before" column skipped: no --before-repo.');
  }
  const servers: Server[] = [];
  try {
    await measureHttp();
  } catch (error) {
    notes.push(`HTTP measurements stopped: ${(error as Error).message.slice(0, 500)}`);
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }

  async function measureHttp() {
    for (const [name, checkout] of apis) {
      const port = await freePort();
      const server = await startServer(
        `api (${name})`,
        join(checkout, 'api', 'src', 'main.ts'),
        port,
        benchApiEnv(fixture.shuffled.dataDir, port, {
          API_CURSOR_SECRET: secret,
          API_UPDATED_SINCE_OVERLAP_MS: '0',
          // The old plans block the event loop for seconds: no load shedding in the way.
          API_MAX_EVENT_LOOP_DELAY_MS: '0',
        }),
        answersHealth,
      );
      servers.push(server);
      // Warm-up (JIT, statement caches): unfiltered and filtered pages of both sorts for 2 s.
      const warmUntil = performance.now() + 2000;
      for (let turn = 0; performance.now() < warmUntil; turn++) {
        const since = new Date((SHUFFLED_BASE_US + (sites - 100) * 1000) / 1000).toISOString();
        const path = ['/v1/sites?limit=50', `/v1/sites?limit=50&sort=name&filter[updated_since]=${since}`][
          turn % 2
        ];
        await (await fetch(`${server.base}${path}`, { headers: auth })).text();
      }
      for (const sort of ['id', 'name']) {
        const base = `${server.base}/v1/sites?limit=50${sort === 'id' ? '' : `&sort=${sort}`}`;
        const peers = { first: base, deep: await deepUrl(base, auth, Math.floor(sites / 2)) };
        for (const matching of MATCHING) {
          const first = `${base}&filter[updated_since]=${sinceIso(matching)}`;
          for (const page of ['first', 'deep'] as const) {
            if (page === 'deep' && matching < 2) continue;
            const what = `${name} sort=${sort} matching=${matching} ${page}`;
            log(`http ${what}`);
            try {
              const url = page === 'first' ? first : await deepUrl(first, auth, Math.floor(matching / 2));
              const [row, peer] = await sequential([url, peers[page]], auth, budgetMs * 2);
              http.push({ api: name, sort, matching, page, ...row!, peerMs: peer!.medianMs });
            } catch (error) {
              notes.push(`HTTP ${what} failed: ${(error as Error).message.slice(0, 300)}`);
            }
          }
        }
      }
    }
    const load: LoadOptions = {
      connections: Number(args.connections),
      durationSeconds: Number(args.duration),
      warmupSeconds: 1,
    };
    const after = servers[0]!;
    for (const sort of ['id', 'name']) {
      const base = `${after.base}/v1/sites?limit=50${sort === 'id' ? '' : `&sort=${sort}`}`;
      for (const matching of MATCHING) {
        log(`autocannon sort=${sort} matching=${matching}`);
        // The unfiltered peer right before each row: the machine's load moves between rows.
        const peer = await measure(`${sort} unfiltered`, base, auth, load);
        const url = `${base}&filter[updated_since]=${sinceIso(matching)}`;
        throughput.push({ sort, matching, row: await measure(`${sort} ${matching}`, url, auth, load), peer });
      }
    }
  }
}

const date = new Date().toISOString().slice(0, 10);
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--', 'projections/src/read', 'bench'], {
  cwd: repo,
  encoding: 'utf8',
}).trim();
const report = renderSinceReport({
  date,
  commit: dirty
    ? `${commit} + uncommitted: ${dirty
        .split('\n')
        .map((line) => line.slice(3))
        .join(', ')}`
    : commit,
  sites,
  loadBefore,
  inputs: [
    `one company of ${sites.toLocaleString('en-US')} sites (api-list's fixture, ${fixture.clustered.buildSeconds} s to build) and its copy with shuffled change times (${fixture.shuffleSeconds} s), ${TOMBSTONES_PER_TABLE.toLocaleString('en-US')} sites + as many site_contacts tombstones in the copy`,
    'pages of 50 (`limit + 1` = 51 rows read); readPage "deep": pages after 64 rows spread over the middle 80 % of the answer (of the whole order for the unfiltered peer), taken in turn so that each call reads other rows, as a walk does; HTTP "deep": the page after the middle row of the answer, reached through links.next',
    `readPage: the page and its unfiltered peer called in turn, the old statement apart (it sweeps the page cache), the plans of the threshold table one after the other; median of up to ${timing.maxCalls} calls each or ${budgetMs} ms of their time, after a warm-up call (a call over 250 ms: 2 more)`,
    ...(args['before-repo'] === undefined ? [] : [`HTTP "before": the api of ${args['before-repo']}`]),
    `HTTP: the api process with every production plugin, log level warn, API_UPDATED_SINCE_OVERLAP_MS=0; the page and its unfiltered peer requested in turn, one at a time, for up to ${budgetMs * 2} ms; autocannon ${args.connections} connections, ${args.duration} s after 1 s of warm-up, the unfiltered peer measured right before each row`,
  ],
  pages,
  clustered,
  deletions,
  crossovers,
  http,
  throughput,
  notes,
});
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
const out = join(import.meta.dirname, 'results', `api-since-${date}.md`);
writeFileSync(out, report);
process.stdout.write(report);
log(`written to ${out}`);
