// The soak's short variant (bench/pipeline/soak.ts --minutes 3; bench/README.md, "soak"): the
// bench's own run — ingest and the api as child processes on the real pipeline, a writer, pagers,
// token syncs, 304 polls, feed followers and a live stream, a company rebuild and an api restart
// on the way — then BOUNDS on what it left behind, never timings: no figure grows past a generous
// bound after the warm-up, descriptors back near their baseline, the WAL within its checkpoint
// bound, nothing held once the followers stopped, the lag back to 0, no 5xx nor failed connection
// that the rebuild or the restart does not explain, and every change PostgreSQL holds served by
// the api.

import { runSoak, SOAK_DEFAULTS, type SoakResult } from '@pda/bench/soak';
import { FIGURES, type FigureKey, fittedPoints, slopePerSecond } from '@pda/bench/soak-figures';
import { beforeAll, describe, expect, test } from 'vitest';

/** A WAL file's bound: 1,000 frames of 4 KiB pages and their headers (projections' checkpoint), rounded up. */
const WAL_FILE_MB = 4.2;

let result: SoakResult;

/** Growth over the fitted samples (slope × span, per process as the bench's verdict fits it). */
function growth(key: FigureKey): number {
  const figure = FIGURES.find((f) => f.key === key);
  if (!figure) throw new Error(key);
  const points = fittedPoints(result.samples, figure, result.inputs.warmupSeconds);
  expect(points.length, `${key}: fitted samples`).toBeGreaterThanOrEqual(3);
  const span = Math.max(...points.map((p) => p.t)) - Math.min(...points.map((p) => p.t));
  return (slopePerSecond(points) ?? 0) * span;
}

const values = (key: FigureKey) =>
  result.samples.map((s) => s.values[key]).filter((v): v is number => typeof v === 'number');

describe('soak, 3 minutes', () => {
  beforeAll(async () => {
    result = await runSoak({
      ...SOAK_DEFAULTS,
      minutes: 3,
      log: (line) => process.stderr.write(`soak: ${line}\n`),
    });
  }, 900_000);

  test('the rebuild and the restart happened, and the partners rode them out', () => {
    expect(result.eventError).toBeNull();
    expect(result.rebuild.outcome).toBe('done');
    expect(result.apiRestart.to).not.toBeNull();
    expect(result.samples.some((s) => s.apiGeneration === 2)).toBe(true);
    // The live stream reconnected (at least across the restart) and received changes.
    expect(result.stream.connections).toBeGreaterThanOrEqual(2);
    expect(result.stream.changes).toBeGreaterThan(0);
    // Polls of the quiet company were answered 304; followers were held.
    expect(result.requests['304 poll']?.['304'] ?? 0).toBeGreaterThan(0);
    expect(Math.max(...values('held_requests'))).toBeGreaterThan(0);
  });

  test('no 5xx or failed connection that the rebuild or the restart does not explain', () => {
    expect(result.unexplained).toEqual([]);
    expect(result.writer.errors).toBe(0);
  });

  test('memory, descriptors and caches do not grow past generous bounds after the warm-up', () => {
    expect(growth('ingest_rss_mb')).toBeLessThan(64);
    expect(growth('api_rss_mb')).toBeLessThan(64);
    expect(growth('ingest_heap_mb')).toBeLessThan(48);
    expect(growth('api_heap_mb')).toBeLessThan(48);
    expect(growth('ingest_fds')).toBeLessThan(16);
    expect(growth('api_fds')).toBeLessThan(16);
    expect(growth('ingest_statements')).toBeLessThan(32);
    expect(growth('api_statements')).toBeLessThan(32);
  });

  test('at the end: descriptors near their baseline, nothing held, lag 0, the WAL within its bound', () => {
    const { baseline, final } = result;
    expect(final.values.ingest_fds).toBeLessThanOrEqual((baseline.values.ingest_fds ?? 0) + 50);
    expect(final.values.api_fds).toBeLessThanOrEqual((baseline.values.api_fds ?? 0) + 50);
    expect(final.values.held_requests).toBe(0);
    expect(final.values.open_streams).toBe(0);
    expect(result.lagDrainSeconds).not.toBeNull();
    expect(final.values.lag_events).toBe(0);
    const files = Math.max(...values('ingest_open_files'), ...values('api_open_files'));
    expect(Math.max(...values('wal_mb'))).toBeLessThanOrEqual((files + 2) * WAL_FILE_MB);
  });

  test('every change in PostgreSQL is served by the api', () => {
    expect(result.endCheck.tables.length).toBe((SOAK_DEFAULTS.companies + 1) * 2);
    expect(result.endCheck.tables.filter((t) => t.missing + t.stale + t.extra > 0)).toEqual([]);
    expect(result.endCheck.differences).toBe(0);
  });
});
