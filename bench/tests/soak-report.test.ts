// The soak's result document (bench/pipeline/parts/soak-report.ts) and its reading of incidents
// (bench/pipeline/parts/soak-tally.ts).
import { describe, expect, test } from 'vitest';
import type { SoakSample } from '../pipeline/parts/soak-figures.ts';
import { minuteSamples, samplesTable, verdictTable } from '../pipeline/parts/soak-report.ts';
import { type Incident, unexplained } from '../pipeline/parts/soak-tally.ts';

const at = (t: number, apiGeneration = 1): SoakSample => ({
  t,
  at: '',
  apiGeneration,
  values: { ingest_rss_mb: t },
});

describe('minuteSamples', () => {
  test('the sample nearest each minute, once each', () => {
    const samples = [0, 10, 20, 30, 40, 50, 61, 70, 80, 90, 100, 110, 119.5, 130].map((t) => at(t));
    expect(minuteSamples(samples).map((s) => s.t)).toEqual([0, 61, 119.5]);
  });

  test('a gap of more than half a minute has no row', () => {
    expect(minuteSamples([at(0), at(150)]).map((s) => s.t)).toEqual([0, 150]);
  });
});

describe('tables', () => {
  test('one row per sample, absent figures as a dash, the api down said so', () => {
    const table = samplesTable([at(60), at(70, 0)]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[0]).toContain('| min | api # | ingest_rss_mb |');
    expect(table[2]).toMatch(/^\| 1 \| 1 \| 60 \| — \|/);
    expect(table[3]).toMatch(/^\| 1\.2 \| down \| 70 \|/);
  });

  test('the verdict per figure, with its unit per hour', () => {
    const table = verdictTable([
      {
        key: 'api_rss_mb',
        first: 90,
        last: 120,
        max: 125,
        growthPerHour: 64.5,
        tolerance: 16,
        fittedSamples: 20,
        verdict: 'GROWS',
      },
    ]);
    expect(table).toContain('| api RSS (`api_rss_mb`) | 90 | 120 | 125 | 64.5 MB/h | 16 | 20 | **GROWS** |');
  });
});

describe('unexplained', () => {
  const incident = (t: number, company: string, status: number | 'network'): Incident => ({
    t,
    kind: 'pager',
    company,
    status,
    detail: '',
  });

  test("a rebuild explains its company's 503s in its window; a restart anything in its window", () => {
    const windows = [
      { from: 10, to: 20, company: 'a', status: 503 },
      { from: 30, to: 35 },
    ];
    const left = unexplained(
      [
        incident(15, 'a', 503), // explained: the rebuilt company
        incident(15, 'b', 503), // another company: not
        incident(15, 'a', 500), // another status: not
        incident(25, 'a', 503), // after the rebuild: not
        incident(31, 'b', 'network'), // the restart: explained
      ],
      windows,
    );
    expect(left.map((i) => `${i.t} ${i.company} ${i.status}`)).toEqual(['15 b 503', '15 a 500', '25 a 503']);
  });
});
