// reconcile's handling of rows in flight (settle.ts) on a simulated clock: a row is reported only
// once it still differs after the projection is known current through the source state it is
// compared with, and that state did not change meanwhile; otherwise it settles or stays unsettled.
import { describe, expect, it } from 'vitest';
import type { Values } from '../../reconcile/compare.ts';
import { type Candidate, type SettleIo, settle } from '../../reconcile/settle.ts';
import { tablePlan } from '../../reconcile/tables.ts';

const plan = tablePlan('equipment');
const COMPANY = '0b0b0b0b-0000-4000-8000-000000000001';
const ID = '00000000-0000-4000-8000-000000000001';
const row = (name: string): Values => {
  const values = plan.columns.map((c) => (c === 'id' ? ID : c === 'name' ? name : `x ${c}`));
  return values;
};
const stored = (name: string): Values => [...row(name), plan.render!(row(name))];

function candidate(): Candidate<string> {
  return {
    plan,
    companyId: COMPANY,
    id: ID,
    scope: COMPANY,
    difference: { companyId: COMPANY, table: 'equipment', id: ID, kind: 'different' },
  };
}

/**
 * A world on a simulated clock: the source and projection rows as functions of the time, and the
 * source time through which the projection is known current.
 */
function world(options: {
  source: (t: number) => Values | undefined;
  projection: (t: number) => Values | undefined;
  current: (t: number) => number | null;
}): SettleIo<string> & { reads: number } {
  let t = 1_000_000;
  const io = {
    reads: 0,
    readSource: async (list: readonly Candidate<string>[]) => {
      io.reads++;
      return { atMs: t, rows: list.map(() => options.source(t)) };
    },
    readProjection: async (list: readonly Candidate<string>[]) => list.map(() => options.projection(t)),
    currentAtMs: () => options.current(t),
    sleep: async (ms: number) => {
      t += ms;
    },
    now: () => t,
  };
  return io;
}

const OPTIONS = { waitMs: 60_000, clockMarginMs: 1_000 };

describe('settle', () => {
  it('drops a row that was only in flight (the projection catches up within a quick round)', async () => {
    const start = 1_000_000;
    const io = world({
      source: () => row('new'),
      projection: (t) => (t < start + 150 ? stored('old') : stored('new')),
      current: () => null,
    });
    const result = await settle([candidate()], io, OPTIONS);
    expect(result).toEqual({ confirmed: [], unsettled: [], notCaughtUp: null });
  });

  it('confirms a difference once the projection is current past the snapshot and the source kept the row', async () => {
    const io = world({
      source: () => row('right'),
      projection: () => stored('wrong'),
      // Heartbeats: the projection is known current through 3 s ago.
      current: (t) => t - 3_000,
    });
    const result = await settle([candidate()], io, OPTIONS);
    expect(result.notCaughtUp).toBeNull();
    expect(result.confirmed).toHaveLength(1);
    expect(result.confirmed[0]?.columns?.map((c) => c.name)).toEqual(['name', '_json']);
  });

  it('does not confirm while the projection is not known current: not caught up, unsettled', async () => {
    const io = world({
      source: () => row('right'),
      projection: () => stored('wrong'),
      current: () => 5, // ingest stopped long ago
    });
    const result = await settle([candidate()], io, { waitMs: 10_000, clockMarginMs: 1_000 });
    expect(result.confirmed).toEqual([]);
    expect(result.unsettled.map((d) => d.id)).toEqual([ID]);
    expect(result.notCaughtUp?.projectionCurrentAt).toBe(new Date(5).toISOString());
    expect(result.notCaughtUp?.reason).toMatch(/did not catch up/);
  });

  it('keeps a row whose source changes under it, and confirms it once the source holds still', async () => {
    const start = 1_000_000;
    // The source row changes every 2 s for 20 s, then stays; the projection never gets it right.
    const io = world({
      source: (t) => row(t < start + 20_000 ? `v${Math.floor((t - start) / 2_000)}` : 'final'),
      projection: () => stored('stuck'),
      current: (t) => t - 1_500,
    });
    const result = await settle([candidate()], io, OPTIONS);
    expect(result.confirmed).toHaveLength(1);
    expect(result.confirmed[0]?.columns?.[0]).toMatchObject({
      name: 'name',
      source: 'final',
      projection: 'stuck',
    });
  });

  it('with no wait at all, leaves differing rows unsettled without reading them again', async () => {
    const io = world({ source: () => row('a'), projection: () => stored('b'), current: () => null });
    const result = await settle([candidate()], io, { waitMs: 0, clockMarginMs: 1_000 });
    expect(result.unsettled).toHaveLength(1);
    expect(result.notCaughtUp?.projectionCurrentAt).toBeNull();
    expect(io.reads).toBe(1);
  });

  it('a row missing on the projection that the source then deletes settles (a delete in flight)', async () => {
    const start = 1_000_000;
    const io = world({
      source: (t) => (t < start + 100 ? row('gone soon') : undefined),
      projection: () => undefined,
      current: () => null,
    });
    expect((await settle([candidate()], io, OPTIONS)).confirmed).toEqual([]);
  });
});
