// The reconcile CLI's text: progress lines (bounded for thousands of small companies) and the report.
import { describe, expect, it } from 'vitest';
import { formatReport, progressPrinter } from '../../reconcile/output.ts';
import type { ReconcileReport } from '../../reconcile/types.ts';

const C = '0b0b0b0b-0000-4000-8000-000000000001';

describe('progress', () => {
  it('prints large tables by chunk, notable companies, and small ones at most every 5 s', () => {
    const lines: string[] = [];
    let t = 0;
    const print = progressPrinter((line) => lines.push(line), { now: () => t });
    const company = (index: number, rows: number, candidates = 0) =>
      print({ kind: 'company', companyId: C, index, count: 1_000, rows, candidates });
    for (let i = 1; i <= 500; i++) {
      t += 10; // 500 small companies in 5 s: one line
      company(i, 40);
    }
    company(501, 40, 2); // rows to read again
    company(502, 250_000); // large
    print({ kind: 'table', companyId: C, table: 'sites', rows: 50_000, done: false });
    print({ kind: 'table', companyId: C, table: 'services', rows: 12, done: true });
    company(1_000, 3); // the last
    expect(lines).toEqual([
      `reconcile: company 500/1000 ${C}: 40 rows`,
      `reconcile: company 501/1000 ${C}: 40 rows, 2 to read again`,
      `reconcile: company 502/1000 ${C}: 250,000 rows`,
      `reconcile: ${C} sites: 50,000 rows`,
      `reconcile: company 1000/1000 ${C}: 3 rows`,
    ]);
  });
});

describe('the text report', () => {
  const base: ReconcileReport = {
    ok: true,
    verifiedThrough: { lsn: '0/3C32FD0', at: '2026-11-25T10:00:00.000Z' },
    companies: [],
    control: { tables: [], snapshot: { lsn: '0/3C32FD0', at: '2026-11-25T10:00:00.000Z' } },
    differences: [],
    unsettled: [],
    notCaughtUp: null,
    totals: {
      companies: 1,
      tables: 9,
      sourceRows: 1_234,
      projectionRows: 1_234,
      differences: 0,
      missing: 0,
      extra: 0,
      different: 0,
      unsettled: 0,
    },
    durationMs: 1_500,
    rowsPerSecond: 823,
  };

  it('says what was checked, the position and the result', () => {
    expect(formatReport(base)).toBe(
      'checked 1 company, 9 tables: 1,234 source rows, 1,234 projection rows in 1.5 s (823 rows/s)\n' +
        'verified through: LSN 0/3C32FD0 (2026-11-25T10:00:00.000Z)\n' +
        'result: no differences\n',
    );
  });

  it('lists differences with their columns, cut long values, and says when it did not catch up', () => {
    const text = formatReport({
      ...base,
      ok: false,
      verifiedThrough: null,
      differences: [
        {
          companyId: C,
          table: 'services',
          id: 'x',
          kind: 'different',
          columns: [{ name: '_json', source: 'a'.repeat(400), projection: '{}' }],
        },
      ],
      unsettled: [{ companyId: C, table: 'sites', id: 'y', kind: 'missing' }],
      notCaughtUp: { reason: 'the projection did not catch up', needed: 'T1', projectionCurrentAt: null },
      totals: { ...base.totals, differences: 1, different: 1, unsettled: 1 },
    });
    expect(text).toContain('differences: 1 (missing 0, extra 0, different 1)');
    expect(text).toContain(
      `  different ${C} services x\n      _json: source "${'a'.repeat(159)}…, projection "{}"`,
    );
    expect(text).toContain(
      'not caught up: the projection did not catch up; the projection is known current through never, needed T1',
    );
    expect(text).toContain(`  missing   ${C} sites y`);
    expect(text).not.toContain('verified through');
    expect(text).toMatch(/result: differences found\n$/);
  });
});
