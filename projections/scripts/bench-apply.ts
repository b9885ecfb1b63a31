/**
 * Apply-path throughput (not a test): N real-shaped site/service/contact changes over C companies,
 * applied in batches of B into a temp data dir. Reports events/s for the first pass (inserts) and
 * a second pass (updates of the same rows), and peak RSS.
 *   pnpm exec tsx projections/scripts/bench-apply.ts [events=200000] [companies=300] [batch=10000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Change, makeUpsert, ProjectionStore, sampleRow } from '../src/index.ts';

const [events = 200_000, companies = 300, batchSize = 10_000] = process.argv.slice(2).map(Number);
const companyId = (n: number) => `cccccccc-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const rowId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const TABLES = ['sites', 'services', 'site_contacts'] as const;

function changes(pass: number): Change[] {
  const out: Change[] = [];
  for (let i = 0; i < events; i++) {
    const table = TABLES[i % 3]!;
    const fields = { id: rowId(i), company_id: companyId(i % companies), site_id: rowId(i - (i % 3)) };
    out.push(
      makeUpsert(table, sampleRow(table, fields), pass * events + i + 1, { op: pass === 0 ? 'c' : 'u' }),
    );
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'pda-bench-'));
const store = ProjectionStore.open({ dataDir: dir, maxOpenCompanies: companies });
let peakRss = 0;
for (const pass of [0, 1]) {
  const all = changes(pass);
  const start = performance.now();
  for (let i = 0; i < all.length; i += batchSize) {
    store.applyBatch(all.slice(i, i + batchSize));
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  const seconds = (performance.now() - start) / 1000;
  console.log(
    `${pass === 0 ? 'insert' : 'update'} pass: ${events} events over ${companies} companies, batch ${batchSize}: ` +
      `${Math.round(events / seconds)} events/s`,
  );
}
console.log(`peak RSS ${Math.round(peakRss / 1024 / 1024)} MiB`);
store.close();
rmSync(dir, { recursive: true, force: true });
