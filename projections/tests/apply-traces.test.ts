import { describe, expect, it } from 'vitest';
import { openCompanyReader, ReadHandle, readApplyTraces, readChangesWithRows } from '../src/read/index.ts';
import { makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { A, B, fixedClock, id, tempDataDir } from './helpers.ts';

// The trace link a sampled batch leaves in each company file it writes (migration
// company/007-apply-traces.sql): the api's span of a feed page finds the batch by the change times
// it serves.
describe('apply traces', () => {
  const traceOf = (n: number) => ({
    traceId: n.toString(16).padStart(32, '0'),
    spanId: n.toString(16).padStart(16, '0'),
  });

  it("a traced batch is found by its rows' change times, in each company it wrote; an untraced one leaves none", () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock() });
    let lsn = 1;
    store.applyBatch([A, B].map((c) => makeUpsert('companies', sampleRow('companies', { id: c }), lsn++)));
    const sites = (company: string, from: number) =>
      [0, 1, 2].map((i) =>
        makeUpsert('sites', sampleRow('sites', { id: id(from + i), company_id: company }), lsn++),
      );
    store.applyBatch([...sites(A, 100), ...sites(B, 200)], { trace: traceOf(1) });
    store.applyBatch(sites(A, 300));
    store.applyBatch(sites(A, 400), { trace: traceOf(2) });
    store.close();

    const reader = new ReadHandle(openCompanyReader(dir, A));
    const times = readChangesWithRows(reader, {
      tables: ['sites'],
      after: { changedUs: 0, table: '', id: '' },
      limit: 100,
      columns: [['id']],
    }).rows.map((row) => row.changedUs);
    expect(times).toHaveLength(9);
    const [first, , third, untraced, , , second] = times as number[];
    expect(readApplyTraces(reader, first as number, third as number, 10)).toEqual([traceOf(1)]);
    expect(readApplyTraces(reader, untraced as number, untraced as number, 10)).toEqual([]);
    expect(readApplyTraces(reader, first as number, Number.MAX_SAFE_INTEGER, 10)).toEqual([
      traceOf(1),
      traceOf(2),
    ]);
    expect(readApplyTraces(reader, second as number, second as number, 10)).toEqual([traceOf(2)]);
    reader.close();
    const other = new ReadHandle(openCompanyReader(dir, B));
    expect(readApplyTraces(other, 0, Number.MAX_SAFE_INTEGER, 10)).toEqual([traceOf(1)]);
    other.close();
  });

  it('keeps the newest 1,000 links of a file', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock() });
    let lsn = 1;
    store.applyBatch([makeUpsert('companies', sampleRow('companies', { id: A }), lsn++)]);
    for (let n = 1; n <= 1_005; n++) {
      const site = makeUpsert('sites', sampleRow('sites', { id: id(n), company_id: A }), lsn++);
      store.applyBatch([site], { trace: traceOf(n) });
    }
    store.close();
    const reader = new ReadHandle(openCompanyReader(dir, A));
    const links = readApplyTraces(reader, 0, Number.MAX_SAFE_INTEGER, 2_000);
    expect(links).toHaveLength(1_000);
    expect(links[0]).toEqual(traceOf(6));
    expect(links.at(-1)).toEqual(traceOf(1_005));
    reader.close();
  });
});
