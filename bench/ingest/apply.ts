/**
 * Apply-path throughput (not a test): real-shaped changes over C companies with the table mix of
 * a field-service change stream (80 % creates, 20 % updates of earlier rows), applied in batches
 * of B into a temp data dir. Reports events/s, the split plan / company files / control, the CPU
 * time per event (steadier than wall time on a shared machine), peak RSS.
 *   node bench/ingest/apply.ts [events=200000] [companies=300] [batch=10000] [updateEvery=5]
 * updateEvery=5: every 5th change updates an earlier row (the rest create rows); 1 = a second pass
 * of updates only after creating the rows (steady-state CDC), measured on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Change, SourceTable } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';

const [events = 200_000, companies = 300, batchSize = 10_000, updateEvery = 5] = process.argv
  .slice(2)
  .map(Number);
const companyId = (n: number) => `cccccccc-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const rowId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const MIX: [SourceTable, number][] = [
  ['sites', 40],
  ['services', 15],
  ['site_contacts', 15],
  ['equipment', 10],
  ['consumables', 10],
  ['equipment_categories', 10],
];
const WEIGHTS = MIX.flatMap(([table, weight]) => Array<SourceTable>(weight).fill(table));

function change(i: number, pass: number): Change {
  const table = WEIGHTS[i % WEIGHTS.length]!;
  const update = pass > 0 || (updateEvery > 1 && i % updateEvery === updateEvery - 1);
  const n = pass > 0 ? i : update ? i - WEIGHTS.length : i; // same table, earlier row
  const fields = {
    id: rowId(n),
    company_id: companyId(n % companies),
    site_id: rowId(n - (n % WEIGHTS.length)), // a site of the same company
    category_id: rowId(n % 97),
    // Real updates mostly keep the name: every 4th one renames.
    name: `row ${n}${update && i % 4 === 0 ? ' renamed' : ''}`,
    updated_at: update ? '2026-02-01T00:00:00.000000Z' : '2026-01-31T12:00:00.000000Z',
  };
  return makeUpsert(table, sampleRow(table, fields), pass * events + i + 1, { op: update ? 'u' : 'c' });
}

const dir = mkdtempSync(join(tmpdir(), 'pda-bench-'));
const store = ProjectionStore.open({ dataDir: dir, maxOpenCompanies: companies });
let peakRss = 0;
const split = { planMs: 0, companiesMs: 0, controlMs: 0 };
const passes = updateEvery === 1 ? [0, 1] : [0];
let start = performance.now();
let cpuUs = 0;
for (const pass of passes)
  for (let i = 0; i < events; i += batchSize) {
    if (pass === 1 && i === 0) {
      // Measure the update pass alone.
      start = performance.now();
      cpuUs = 0;
      for (const key of Object.keys(split) as (keyof typeof split)[]) split[key] = 0;
    }
    const batch: Change[] = [];
    for (let j = i; j < Math.min(i + batchSize, events); j++) batch.push(change(j, pass));
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const result = store.applyBatch(batch);
    const cpu = process.cpuUsage(cpu0);
    cpuUs += cpu.user + cpu.system;
    split.planMs += result.timings.planMs;
    split.companiesMs += result.timings.companiesMs;
    split.controlMs += result.timings.controlMs;
    if (i === 0)
      console.log(`first batch (creates ${companies} files): ${Math.round(performance.now() - t0)} ms`);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
const applyMs = split.planMs + split.companiesMs + split.controlMs;
console.log(
  `${passes.length > 1 ? 'update pass: ' : ''}${events} events, ${companies} companies, batch ${batchSize}: ${Math.round(events / (applyMs / 1000))} events/s applied ` +
    `(wall incl. building changes ${Math.round(events / ((performance.now() - start) / 1000))}/s); ` +
    `per event: plan ${((split.planMs * 1000) / events).toFixed(1)} µs, company files ${((split.companiesMs * 1000) / events).toFixed(1)} µs, ` +
    `control ${((split.controlMs * 1000) / events).toFixed(1)} µs; ` +
    `CPU ${(cpuUs / events).toFixed(1)} µs/event (${Math.round(events / (cpuUs / 1e6))} events per CPU-second); peak RSS ${Math.round(peakRss / 2 ** 20)} MiB`,
);
store.close();
rmSync(dir, { recursive: true, force: true });
