/**
 * What the sort indexes that carry the change time (company schema 6,
 * projections/src/migrations/company/006-covering-sort-indexes.sql) cost the writer (NOT a test;
 * bench/README.md, "since-pages"): the same batches of site inserts and of site updates applied
 * through ProjectionStore.applyBatch (what ingest's apply thread does) to a company of N sites,
 * by this checkout's code on a file of its schema and by another checkout's (the code before, on
 * a file its own code built), in the same run.
 *
 *   pnpm --filter @pda/bench exec node ingest/sort-index-writes.ts --before-repo /path/to/checkout
 *     [--sites 100000] [--events 20000] [--batch 2000] [--rounds 3]
 *
 * Each round copies each side's fixture (api-list's company, bench/shared/api-fixture.ts, built once by
 * that side's code under its .data/bench/) to a scratch directory, then applies `events` inserts
 * of new sites and `events` updates of existing sites picked at random (every column rewritten, a
 * new updated_at: what a Debezium update carries), in applyBatch calls of `batch` changes. The
 * sides take turns within a round, the first side alternating between rounds. Reports wall and
 * CPU time (process.cpuUsage) per event and events/s, the median over the rounds, as one JSON
 * document on stdout, and the company file's size after the writes.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Change, Row } from '@pda/projections/model';
import { makeUpsert, seededRandom } from '@pda/projections/testing';
import { type listFixture, siteRows } from '../shared/api-fixture.ts';
import { checkoutBenchFile } from '../shared/checkout-file.ts';
import { repoRoot } from '../shared/paths.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '100000' },
    events: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    'before-repo': { type: 'string' },
  },
});
const sites = Number(args.sites);
const events = Number(args.events);
const batchSize = Number(args.batch);
const rounds = Number(args.rounds);
const beforeRepo = args['before-repo'];
if (beforeRepo === undefined) throw new Error('--before-repo is required (the checkout of the code before)');
const repo = repoRoot;
const log = (line: string) => process.stderr.write(`sort-index-writes: ${line}\n`);

interface Store {
  applyBatch(changes: readonly Change[]): unknown;
  close(): void;
}
interface Side {
  readonly name: string;
  readonly checkout: string;
  readonly fixture: ReturnType<typeof listFixture>;
  readonly open: (dataDir: string) => Store;
  readonly schema: number;
}

async function side(name: string, checkout: string): Promise<Side> {
  const at = (path: string) => pathToFileURL(join(checkout, path)).href;
  const fixtures = (await import(
    checkoutBenchFile(checkout, 'shared/api-fixture.ts', 'api-fixture.ts')
  )) as typeof import('../shared/api-fixture.ts');
  const write = (await import(
    at('projections/src/write/index.ts')
  )) as typeof import('@pda/projections/write');
  log(`${name}: api-list's fixture of ${sites} sites, built by ${checkout}'s code`);
  const fixture = fixtures.listFixture(join(checkout, '.data', 'bench'), sites);
  const db = write.openCompanyWriter(fixture.dataDir, fixture.companyId);
  const schema = db.pragma('user_version', { simple: true }) as number;
  db.close();
  return { name, checkout, fixture, open: (dataDir) => write.ProjectionStore.open({ dataDir }), schema };
}

const sides = [await side('after', repo), await side('before', beforeRepo)];
const { companyId } = sides[0]!.fixture;
if (sides.some((s) => s.fixture.companyId !== companyId))
  throw new Error('the sides built different companies');

// The same changes for both sides: new sites (another seed's rows, moved into this company), then
// updates of random existing sites, every column as Debezium sends it, updated_at a day later.
const LSN = 1_000_000_000;
const inserts: Change[] = [];
for (const row of siteRows('bench-writes', events)) {
  inserts.push(
    makeUpsert('sites', { ...row, company_id: companyId } as unknown as Row, LSN + inserts.length),
  );
}
const existing = [...siteRows(sides[0]!.fixture.seed, sites)];
const random = seededRandom(0x5173);
const updates: Change[] = [];
for (let i = 0; i < events; i++) {
  const row = existing[Math.floor(random() * existing.length)]!;
  const updatedAt = new Date(Date.parse(row.updated_at) + 86_400_000).toISOString().replace('Z', '000Z');
  updates.push(
    makeUpsert('sites', { ...row, updated_at: updatedAt } as unknown as Row, LSN + events + i, { op: 'u' }),
  );
}

interface Cost {
  readonly wallUsPerEvent: number;
  readonly cpuUsPerEvent: number;
  readonly eventsPerSecond: number;
}

function apply(store: Store, changes: readonly Change[]): Cost {
  const cpu = process.cpuUsage();
  const at = performance.now();
  for (let from = 0; from < changes.length; from += batchSize)
    store.applyBatch(changes.slice(from, from + batchSize));
  const wallUs = (performance.now() - at) * 1000;
  const used = process.cpuUsage(cpu);
  return {
    wallUsPerEvent: wallUs / changes.length,
    cpuUsPerEvent: (used.user + used.system) / changes.length,
    eventsPerSecond: changes.length / (wallUs / 1e6),
  };
}

const results = new Map<string, { inserts: Cost[]; updates: Cost[]; fileMiB: number[] }>(
  sides.map((s) => [s.name, { inserts: [], updates: [], fileMiB: [] }]),
);
const loadBefore = loadavg()[0] ?? 0;
for (let round = 0; round < rounds; round++) {
  for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
    const scratch = mkdtempSync(join(tmpdir(), `pda-sort-index-writes-${s.name}-`));
    try {
      cpSync(s.fixture.dataDir, scratch, { recursive: true });
      const store = s.open(scratch);
      const result = results.get(s.name)!;
      try {
        result.inserts.push(apply(store, inserts));
        result.updates.push(apply(store, updates));
      } finally {
        store.close();
      }
      result.fileMiB.push(statSync(join(scratch, 'companies', `${companyId}.sqlite`)).size / 2 ** 20);
      log(
        `round ${round + 1} ${s.name}: ${JSON.stringify({ inserts: result.inserts.at(-1), updates: result.updates.at(-1) })}`,
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round1 = (value: number) => Math.round(value * 10) / 10;
const summary = (costs: readonly Cost[]) => ({
  eventsPerSecond: Math.round(median(costs.map((c) => c.eventsPerSecond))),
  wallUsPerEvent: round1(median(costs.map((c) => c.wallUsPerEvent))),
  cpuUsPerEvent: round1(median(costs.map((c) => c.cpuUsPerEvent))),
  cpuUsPerEventEachRound: costs.map((c) => round1(c.cpuUsPerEvent)),
});
const git = (checkout: string) =>
  execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: checkout, encoding: 'utf8' }).trim();
process.stdout.write(
  `${JSON.stringify(
    {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) },
      load: { before: loadBefore, after: loadavg()[0] },
      inputs: { sites, events, batch: batchSize, rounds },
      sides: sides.map((s) => {
        const result = results.get(s.name)!;
        return {
          side: s.name,
          checkout: s.checkout,
          commit: git(s.checkout),
          companySchema: s.schema,
          fileMiBBefore: Math.round(
            statSync(join(s.fixture.dataDir, 'companies', `${companyId}.sqlite`)).size / 2 ** 20,
          ),
          fileMiBAfter: Math.round(median(result.fileMiB)),
          inserts: summary(result.inserts),
          updates: summary(result.updates),
        };
      }),
    },
    null,
    2,
  )}\n`,
);
