/**
 * The change feed's page read alone, in one process (NOT a test; bench/README.md, "change feed"):
 * the rows with their documents in one UNION ALL statement (readChangesWithRows, what the api
 * runs) against the per-table key ranges then a range walk of each table's winners (readChanges +
 * readChangedRows, its way for a page ending inside one change time and the api's read before
 * 2026-12-01), on api-list's company of each size, at the feed's first page, its middle and near
 * its end. Both read the same page in one snapshot; rounds interleave the two, CPU time per page
 * (process.cpuUsage), median and lowest of the rounds.
 *
 *   pnpm --filter @pda/bench exec node api/changes-read.ts [--sites 10000,100000,1000000] [--rounds 15] [--pages 1000]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type ChangePosition,
  FEED_START,
  openCompanyReader,
  type PageTable,
  ReadHandle,
  readChangedRows,
  readChanges,
  readChangesWithRows,
} from '@pda/projections/read';
import { listFixture } from '../shared/api-fixture.ts';
import { repoRoot } from '../shared/paths.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '10000,100000,1000000' },
    rounds: { type: 'string', default: '15' },
    pages: { type: 'string', default: '1000' },
  },
});
const rounds = Number(args.rounds);
const pages = Number(args.pages);
const repo = repoRoot;
const TABLES: PageTable[] = ['consumables', 'equipment', 'equipment_categories', 'services', 'sites'];
// What the api reads for each type's document (api/src/resources/resource.ts, itemColumns).
const COLUMNS = TABLES.map((table) =>
  table === 'equipment' ? ['_json', 'id', 'category_id'] : ['_json', 'id'],
);
const LIMIT = 50;

function byRanges(handle: ReadHandle, after: ChangePosition) {
  const page = readChanges(handle, { tables: TABLES, after, limit: LIMIT });
  const counts = new Map<PageTable, number>();
  for (const row of page.rows)
    if (row.op === 'upsert') counts.set(row.table, (counts.get(row.table) ?? 0) + 1);
  for (const [table, count] of counts) {
    readChangedRows(handle, table, after, count, COLUMNS[TABLES.indexOf(table)]!);
  }
  return page.rows.length;
}

const oneStatement = (handle: ReadHandle, after: ChangePosition) =>
  readChangesWithRows(handle, { tables: TABLES, after, limit: LIMIT, columns: COLUMNS }).rows.length;

/** CPU µs per call of each, rounds interleaved: [median, lowest]. */
function compare(calls: Record<string, () => unknown>): Map<string, [number, number]> {
  const times = new Map<string, number[]>(Object.keys(calls).map((name) => [name, []]));
  for (const call of Object.values(calls)) for (let i = 0; i < 200; i++) call();
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of Object.entries(calls)) {
      const start = process.cpuUsage();
      for (let i = 0; i < pages; i++) call();
      const spent = process.cpuUsage(start);
      times.get(name)!.push((spent.user + spent.system) / pages);
    }
  }
  return new Map(
    [...times].map(([name, list]) => {
      list.sort((a, b) => a - b);
      return [name, [list[list.length >> 1]!, list[0]!]];
    }),
  );
}

const lines = [
  '| sites | page | per-table ranges + documents µs (median, lowest) | one statement µs | one ÷ ranges |',
  '|---:|---|---:|---:|---:|',
];
for (const sites of args.sites.split(',').map(Number)) {
  const fixture = listFixture(join(repo, '.data', 'bench'), sites);
  const handle = new ReadHandle(openCompanyReader(fixture.dataDir, fixture.companyId));
  try {
    const [first] = readChanges(handle, { tables: TABLES, after: FEED_START, limit: 1 }).rows;
    const span = handle.db.prepare('SELECT max(_changed_us) FROM sites').pluck().get() as number;
    const startUs = first!.changedUs;
    const at = (share: number): ChangePosition => ({
      changedUs: Math.floor(startUs + (span - startUs) * share),
      table: '',
      id: '',
    });
    for (const [name, after] of [
      ['first', FEED_START],
      ['middle', at(0.5)],
      ['near the end', at(0.999)],
    ] as const) {
      const same = handle.snapshot(() => [byRanges(handle, after), oneStatement(handle, after)]);
      if (same[0] !== same[1]) throw new Error(`${sites} sites, ${name}: ${same[0]} vs ${same[1]} rows`);
      const result = compare({
        ranges: () => handle.snapshot(() => byRanges(handle, after)),
        one: () => handle.snapshot(() => oneStatement(handle, after)),
      });
      const [rangesMedian, rangesLow] = result.get('ranges')!;
      const [oneMedian, oneLow] = result.get('one')!;
      lines.push(
        `| ${sites.toLocaleString('en-US')} | ${name} (${same[0]} rows) | ${rangesMedian.toFixed(1)}, ${rangesLow.toFixed(1)} | ${oneMedian.toFixed(1)}, ${oneLow.toFixed(1)} | ${(oneMedian / rangesMedian).toFixed(2)}× |`,
      );
      process.stderr.write(`changes-read: ${lines.at(-1)}\n`);
    }
  } finally {
    handle.close();
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
