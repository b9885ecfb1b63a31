/**
 * Since-page benchmark (NOT a test; bench/README.md, "since-pages"): a page of a 1,000,000-site
 * company with filter[updated_since] matching 0, 100, 1 %, 10 % and all sites, against the
 * unfiltered page of the same sort and depth measured in the same run (the target: at most 2× it;
 * projections/README.md, "Pages with a since"), and whole walks of since answers.
 *
 *   pnpm --filter @pda/bench exec node api/since.ts [--sites 1000000] [--budget-ms 800]
 *     [--before-repo /path/to/checkout] [--no-http] [--no-walks] [--walk-repeats 2]
 *     [--duration 3] [--connections 10]
 *
 * Inputs (built once, cached under .data/bench/; bench/api/parts/since-fixture.ts): api-list's company
 * as it is (change times follow created_at: the clustered worst case) and a copy with shuffled
 * change times plus tombstones. With --before-repo (a checkout of the code before, with its own
 * `pnpm install --offline`), that checkout's fixture code builds the same inputs under its own
 * .data/bench/ (its schema: a file of this code's schema may not open there), and its code reads
 * them beside this code's, in the same run. Measures, on the shuffled copy unless said:
 * 1. readPage in this process, every sort, page 1 and a page from the middle of the answer:
 *    µs per page (median), rows on it, whether it stopped at its budget (short), the unfiltered
 *    peer; the same with the before code on its file; the clustered file for the sorts its change
 *    times follow; this code's plans forced around their threshold; readDeletions against the
 *    statement of 37854c8 (bench/api/parts/since-before.ts).
 * 2. whole walks (api/parts/since-walk.ts): every page of the answer of 0.1 %, 1 % and 10 % of the sites,
 *    sorted by id, name, created_at and updated_at (shuffled) and by created_at and updated_at
 *    (clustered), pages of 50 and 200: pages, short pages, total and slowest page, both sides.
 * 3. the api in its own process (api/src/main.ts, overlap 0 so the since is exact): sequential
 *    ms for default sort and sort=name (shuffled) and sort=created_at / updated_at (clustered),
 *    page 1 and a deep page reached by following links.next, each beside the unfiltered page;
 *    the same against --before-repo's api on its files; then page 1 under autocannon.
 * Writes bench/results/api-since-<date>.md and prints it.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { changedPlanMax } from '@pda/projections/read';
import { freePort } from '@pda/projections/testing';
import { type LoadOptions, type Measurement, measure } from '../shared/api-measure.ts';
import { answersHealth, benchApiEnv, type Server, startServer } from '../shared/api-processes.ts';
import { checkoutBenchFile } from '../shared/checkout-file.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import {
  ensureTombstones,
  type SinceFixture,
  sinceFixture,
  TOMBSTONES_PER_TABLE,
} from './parts/since-fixture.ts';
import { deepUrl, type HttpRow, sequential } from './parts/since-http.ts';
import {
  type CrossoverRow,
  type DeletionsRow,
  loadReadSide,
  measureCrossovers,
  measureDeletions,
  PageBench,
  type PageRow,
  type ReadSide,
  SORTS,
  type SortCase,
} from './parts/since-pages.ts';
import { renderSinceReport } from './parts/since-report.ts';
import { bestWalks, type WalkRow } from './parts/since-walk.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '1000000' },
    'budget-ms': { type: 'string', default: '800' },
    'before-repo': { type: 'string' },
    'no-http': { type: 'boolean', default: false },
    'no-walks': { type: 'boolean', default: false },
    'walk-repeats': { type: 'string', default: '2' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
  },
});
const sites = Number(args.sites);
const budgetMs = Number(args['budget-ms']);
const walkRepeats = Number(args['walk-repeats']);
if (!Number.isInteger(sites) || sites < 1000) throw new Error('--sites must be an integer >= 1000');
const repo = repoRoot;
const log = (line: string) => process.stderr.write(`api-since: ${line}\n`);
const notes: string[] = [];

interface Side {
  readonly name: 'after' | 'before';
  readonly checkout: string;
  readonly read: ReadSide;
  readonly fixture: SinceFixture;
}

log(`inputs for ${sites} sites (built once, then cached under .data/bench/)`);
const sides: Side[] = [];
{
  const fixture = sinceFixture(join(repo, '.data', 'bench'), sites);
  ensureTombstones(fixture);
  sides.push({ name: 'after', checkout: repo, read: await loadReadSide(), fixture });
}
const beforeRepo = args['before-repo'];
if (beforeRepo !== undefined) {
  const fixtureCode = checkoutBenchFile(beforeRepo, 'api/parts/since-fixture.ts', 'api-since-fixture.ts');
  log(`inputs of the before side, built by ${beforeRepo}'s own code`);
  const code = (await import(fixtureCode)) as typeof import('./parts/since-fixture.ts');
  const fixture = code.sinceFixture(join(beforeRepo, '.data', 'bench'), sites);
  code.ensureTombstones(fixture);
  sides.push({ name: 'before', checkout: beforeRepo, read: await loadReadSide(beforeRepo), fixture });
} else {
  notes.push('No "before" side (no --before-repo).');
}

const percent = (share: number) => Math.round(sites * share);
const MATCHING = [0, 100, percent(0.01), percent(0.1), sites];
const WALK_MATCHING = [percent(0.001), percent(0.01), percent(0.1)];
const WALK_LIMITS = [50, 200];
const bySort = (labels: readonly string[]) => SORTS.filter((sort) => labels.includes(sort.label));
const timing = { maxCalls: 300, budgetMs, minCalls: 5 };
const loadBefore = loadavg()[0] ?? 0;

/** filter[updated_since] per side, file and count: the ms at or after the count-th newest change. */
type File = 'shuffled' | 'clustered';
const sinces = new Map<string, { iso: string; matched: number }>();
const sinceKey = (side: string, file: File, matching: number) => `${side}|${file}|${matching}`;
function noteSinces(side: Side, file: File, bench: PageBench, matchings: readonly number[]) {
  for (const matching of matchings) {
    const ms = Math.ceil(bench.sinceMatching(matching) / 1000);
    sinces.set(sinceKey(side.name, file, matching), {
      iso: new Date(ms).toISOString(),
      matched: bench.matchingSince(ms * 1000),
    });
  }
}

const pages: PageRow[] = [];
const clustered: PageRow[] = [];
const deletions: DeletionsRow[] = [];
const crossovers: CrossoverRow[] = [];
const walks: WalkRow[] = [];

/** Both sides' benches on one kind of file, closed after `run`. */
function onFile(file: File, run: (benches: PageBench[]) => void) {
  const benches = sides.map(
    (side) =>
      new PageBench(file, side.fixture[file].dataDir, side.fixture[file].companyId, timing, side.read),
  );
  try {
    run(benches);
  } finally {
    for (const bench of benches) bench.close();
  }
}

function pageRows(
  benches: PageBench[],
  file: File,
  sorts: readonly SortCase[],
  matchings: readonly number[],
) {
  const out = file === 'shuffled' ? pages : clustered;
  for (const sort of sorts) {
    for (const matching of matchings) {
      for (const page of ['first', 'deep'] as const) {
        if (page === 'deep' && matching < 2) continue;
        const [a, b] = benches.map((bench) => bench.measure(sort, matching, page));
        out.push({ file, sort: sort.label, matching, page, after: a!, before: b });
        log(JSON.stringify(out.at(-1)));
      }
    }
  }
}

function walkRows(benches: PageBench[], file: File, sorts: readonly SortCase[]) {
  if (args['no-walks']) return;
  for (const sort of sorts) {
    for (const limit of WALK_LIMITS) {
      const [afterPeer, beforePeer] = benches.map((bench) => bench.unfilteredUs(sort, limit));
      for (const matching of WALK_MATCHING) {
        const [a, b] = bestWalks(benches, sort, matching, limit, walkRepeats);
        walks.push({
          file,
          sort: sort.label,
          matching,
          limit,
          after: a!,
          afterUnfilteredUs: afterPeer!,
          before: b,
          beforeUnfilteredUs: beforePeer,
        });
        log(JSON.stringify(walks.at(-1)));
        for (const [index, walk] of [a, b].entries()) {
          if (walk !== undefined && walk.rows !== matching)
            notes.push(
              `${sides[index]!.name} ${file} ${sort.label} limit ${limit}: the walk gave ${walk.rows} rows of ${matching}.`,
            );
        }
      }
    }
  }
}

const WALK_SORTS = ['id', 'name', 'created_at', 'updated_at'];
log('readPage, shuffled change times');
onFile('shuffled', (benches) => {
  for (const [index, bench] of benches.entries()) noteSinces(sides[index]!, 'shuffled', bench, MATCHING);
  pageRows(benches, 'shuffled', SORTS, MATCHING);
  log('plans forced around the threshold');
  const [bench] = benches as [PageBench];
  const around = (max: number) => [0.5, 1, 2, 4].map((x) => Math.min(sites, Math.round(x * max)));
  crossovers.push(...measureCrossovers(bench, SORTS[0]!, around(changedPlanMax(50, true))));
  for (const sort of [SORTS[2]!, SORTS[4]!]) {
    crossovers.push(...measureCrossovers(bench, sort, around(changedPlanMax(50, false))));
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
      deletions.push(measureDeletions(bench, matching, page));
      log(JSON.stringify(deletions.at(-1)));
    }
  }
  log('whole walks, shuffled');
  walkRows(benches, 'shuffled', bySort(WALK_SORTS));
});

const CLUSTERED_HTTP = WALK_MATCHING;
log('readPage, clustered change times');
onFile('clustered', (benches) => {
  for (const [index, bench] of benches.entries())
    noteSinces(sides[index]!, 'clustered', bench, CLUSTERED_HTTP);
  pageRows(benches, 'clustered', bySort(['created_at', '-created_at', 'updated_at', 'id', 'name']), [
    100,
    ...WALK_MATCHING,
  ]);
  log('whole walks, clustered');
  walkRows(benches, 'clustered', bySort(['created_at', 'updated_at']));
});

const http: HttpRow[] = [];
const throughput: { sort: string; matching: number; row: Measurement; peer: Measurement }[] = [];
if (args['no-http']) {
  notes.push('HTTP rows skipped (--no-http).');
} else {
  const secret = randomBytes(32).toString('hex');
  const load: LoadOptions = {
    connections: Number(args.connections),
    durationSeconds: Number(args.duration),
    warmupSeconds: 1,
  };
  const plans: { file: File; sorts: string[]; matchings: number[]; loaded: [string, number][] }[] = [
    {
      file: 'shuffled',
      sorts: ['id', 'name'],
      matchings: MATCHING,
      loaded: ['id', 'name'].flatMap((sort) => MATCHING.map((m): [string, number] => [sort, m])),
    },
    {
      file: 'clustered',
      sorts: ['created_at', 'updated_at'],
      matchings: CLUSTERED_HTTP,
      loaded: [percent(0.01), percent(0.1)].map((m): [string, number] => ['created_at', m]),
    },
  ];
  for (const side of sides) {
    for (const plan of plans) {
      let server: Server | undefined;
      try {
        const port = await freePort();
        server = await startServer(
          `api (${side.name}, ${plan.file})`,
          join(side.checkout, 'api', 'src', 'main.ts'),
          port,
          benchApiEnv(side.fixture[plan.file].dataDir, port, {
            API_CURSOR_SECRET: secret,
            API_UPDATED_SINCE_OVERLAP_MS: '0',
            // The old plans block the event loop for seconds: no load shedding in the way.
            API_MAX_EVENT_LOOP_DELAY_MS: '0',
          }),
          answersHealth,
        );
        await measureHttp(side, plan, server);
      } catch (error) {
        notes.push(`HTTP ${side.name} ${plan.file} stopped: ${(error as Error).message.slice(0, 500)}`);
      } finally {
        await server?.stop();
      }
    }
  }

  async function measureHttp(side: Side, plan: (typeof plans)[number], server: Server) {
    const auth = { authorization: `Bearer ${side.fixture[plan.file].key}` };
    const since = (matching: number) => sinces.get(sinceKey(side.name, plan.file, matching))!;
    const url = (sort: string, matching?: number) =>
      `${server.base}/v1/sites?limit=50${sort === 'id' ? '' : `&sort=${sort}`}${
        matching === undefined ? '' : `&filter[updated_since]=${since(matching).iso}`
      }`;
    // Warm-up (JIT, statement caches): unfiltered and filtered pages of the file's sorts for 2 s.
    const warm = plan.sorts.flatMap((sort) => [url(sort), url(sort, plan.matchings[1]!)]);
    const warmUntil = performance.now() + 2000;
    for (let turn = 0; performance.now() < warmUntil; turn++) {
      await (await fetch(warm[turn % warm.length]!, { headers: auth })).text();
    }
    for (const sort of plan.sorts) {
      const peers = { first: url(sort), deep: await deepUrl(url(sort), auth, Math.floor(sites / 2)) };
      for (const matching of plan.matchings) {
        const { matched } = since(matching);
        for (const page of ['first', 'deep'] as const) {
          if (page === 'deep' && matched < 2) continue;
          const what = `${side.name} ${plan.file} sort=${sort} matching=${matched} ${page}`;
          log(`http ${what}`);
          try {
            const first = url(sort, matching);
            const target = page === 'first' ? first : await deepUrl(first, auth, Math.floor(matched / 2));
            const [row, peer] = await sequential([target, peers[page]], auth, budgetMs * 2);
            http.push({
              api: side.name,
              file: plan.file,
              sort,
              matching: matched,
              asked: matching,
              page,
              ...row!,
              peerMs: peer!.medianMs,
            });
          } catch (error) {
            notes.push(`HTTP ${what} failed: ${(error as Error).message.slice(0, 300)}`);
          }
        }
      }
    }
    if (side.name !== 'after') return;
    for (const [sort, matching] of plan.loaded) {
      log(`autocannon ${plan.file} sort=${sort} matching=${matching}`);
      // The unfiltered peer right before each row: the machine's load moves between rows.
      const peer = await measure(`${sort} unfiltered`, url(sort), auth, load);
      const row = await measure(`${sort} ${matching}`, url(sort, matching), auth, load);
      throughput.push({
        sort: plan.file === 'clustered' ? `${sort} (clustered)` : sort,
        matching,
        row,
        peer,
      });
    }
  }
}

const fileMiB = (fixture: SinceFixture['clustered']) =>
  Math.round(statSync(join(fixture.dataDir, 'companies', `${fixture.companyId}.sqlite`)).size / 2 ** 20);
const gitAt = (checkout: string, argv: string[]) =>
  execFileSync('git', argv, { cwd: checkout, encoding: 'utf8' }).trimEnd();
const date = new Date().toISOString().slice(0, 10);
/** A checkout's commit, and what in the measured code or the bench is not committed. */
function commitOf(checkout: string): string {
  const commit = gitAt(checkout, ['rev-parse', '--short', 'HEAD']);
  const dirty = gitAt(checkout, ['status', '--porcelain', '--', 'projections/src', 'api/src', 'bench']);
  return dirty
    ? `${commit} + uncommitted: ${dirty
        .split('\n')
        .map((line) => line.slice(3))
        .join(', ')}`
    : commit;
}
const schema = (side: Side) =>
  `${side.name} (${side.checkout}, ${commitOf(side.checkout)}): company files of ${fileMiB(side.fixture.clustered)} MiB (clustered) and ${fileMiB(side.fixture.shuffled)} MiB (shuffled), api-list's fixture ${side.fixture.clustered.buildSeconds} s to build, the shuffled copy ${side.fixture.shuffleSeconds} s, each built by this side's own code (bench/shared/api-fixture.ts, api/parts/since-fixture.ts: ProjectionStore.applyBatch, then one UPDATE of every change time)`;
const report = renderSinceReport({
  date,
  commit: commitOf(repo),
  sites,
  loadBefore,
  inputs: [
    `one company of ${sites.toLocaleString('en-US')} sites (api-list's fixture) and its copy with shuffled change times, ${TOMBSTONES_PER_TABLE.toLocaleString('en-US')} sites + as many site_contacts tombstones in the copy, per side:`,
    ...sides.map(schema),
    'readPage pages of 50 (`limit + 1` = 51 rows wanted); "deep": pages after 64 rows spread over the middle 80 % of the answer (of the whole order for the unfiltered peer), taken in turn so that each call reads other rows, as a walk does; HTTP "deep": the page after the middle row of the answer, reached through links.next',
    `readPage: each side's page and its unfiltered peer (same side, same file) called in turn, the sides one after the other, the plans of the threshold table one after the other; median of up to ${timing.maxCalls} calls each or ${budgetMs} ms of their time, after a warm-up call (a call over 250 ms: 2 more)`,
    `whole walks: every page from the first to has_more false, each in its own read snapshot, the next one after Page.reached or the last row (what links.next carries); the cheaper of ${walkRepeats} walks per side, the sides' walks in turn; the unfiltered peer: the median deep unfiltered page of the same sort and limit`,
    'clustered sinces over HTTP: the millisecond at or after the M-th newest change time, so the answer is M or a few rows fewer (the matching column gives the exact count)',
    `HTTP: the api process of each side on its own files, with every production plugin, log level warn, API_UPDATED_SINCE_OVERLAP_MS=0; the page and its unfiltered peer requested in turn, one at a time, for up to ${budgetMs * 2} ms; autocannon (this side only) ${args.connections} connections, ${args.duration} s after 1 s of warm-up, the unfiltered peer measured right before each row`,
  ],
  pages,
  clustered,
  walks,
  deletions,
  crossovers,
  http,
  throughput,
  notes,
});
mkdirSync(resultsDir, { recursive: true });
const out = join(resultsDir, `api-since-${date}.md`);
writeFileSync(out, report);
process.stdout.write(report);
log(`written to ${out}`);
