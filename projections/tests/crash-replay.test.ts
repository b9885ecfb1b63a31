import { describe, expect, it } from 'vitest';
import type { Change } from '../src/model/index.ts';
import { makeDelete, makeTruncate, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { applyCompany } from '../src/write/apply/apply-company.ts';
import { Tally } from '../src/write/apply/result.ts';
import { CompanyFiles } from '../src/write/files/company-files.ts';
import { ControlFile } from '../src/write/files/control-file.ts';
import { type ClockUs, type DeadLetter, ProjectionStore } from '../src/write/index.ts';
import { companyOrder } from '../src/write/plan/company-order.ts';
import { planBatch } from '../src/write/plan/plan-batch.ts';
import { A, B, C, controlRows, dump, fixedClock, id, tempDataDir } from './helpers.ts';

/**
 * A crash between the transactions of a batch (after k of its n company files committed, before
 * the control transaction) followed by redelivery of the whole batch must end with exactly the rows
 * of an uninterrupted run (exactly once in effect: docs/architecture.md#guarantees).
 */

const given: Change[] = [
  makeUpsert('companies', sampleRow('companies', { id: A }), 1),
  makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: A }), 2),
  makeUpsert('sites', sampleRow('sites', { id: id(2), company_id: B }), 3),
  makeUpsert('services', sampleRow('services', { id: id(3), company_id: C }), 4),
  makeUpsert('site_contacts', sampleRow('site_contacts', { id: id(4), company_id: A, site_id: id(1) }), 5),
];

const batch: Change[] = [
  makeUpsert('companies', sampleRow('companies', { id: B }), 10),
  makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: B, name: 'Moved to B' }), 11), // move A → B
  makeDelete('sites', { id: id(2) }, 12), // routed to B
  makeDelete('site_contacts', { id: id(4) }, 13), // routed to A
  makeUpsert('services', sampleRow('services', { id: id(5), company_id: A }), 14),
  makeTruncate('services', 15), // reaches A, B, C
  makeUpsert('services', sampleRow('services', { id: id(6), company_id: C }), 16),
  makeUpsert('sites', sampleRow('sites', { id: id(7), company_id: C }), 17),
  makeDelete('sites', { id: id(7) }, 18),
  makeUpsert('sites', sampleRow('sites', { id: id(8), company_id: A, name: null }), 19), // refused
];

const deadLetters: DeadLetter[] = [
  { topic: 'pda.public.sites', partition: 0, offset: '42', key: '{"id":1}', reason: 'bad JSON' },
];

function reference(): ReturnType<typeof dump> {
  const dir = tempDataDir();
  const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock() });
  store.applyBatch(given);
  store.applyBatch(batch, { deadLetters });
  store.close();
  return dump(dir);
}

/**
 * The interrupted attempt: the batch is applied as applyBatch does (plan, company transactions in
 * its order, control), but the process "dies" after `k` company transactions, before the control
 * transaction of the part they belong to. Returns how many company transactions the batch has.
 */
function crashAfter(dir: string, clock: ClockUs, changes: readonly Change[], k: number): number {
  let done = 0;
  let rest = changes;
  while (rest.length > 0) {
    const control = new ControlFile(dir);
    const files = new CompanyFiles(dir, 8, clock);
    const plan = planBatch(rest, control, dir);
    for (const companyId of companyOrder(plan, (id) => files.isOpen(id))) {
      if (done === k) break;
      applyCompany(files, companyId, plan.companies.get(companyId) ?? [], new Tally(), []);
      done++;
    }
    files.closeAll();
    control.close();
    if (done === k || plan.planned === rest.length) break;
    // A cut batch: the part committed as a batch of its own (control included) before the rest.
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch(rest.slice(0, plan.planned));
    store.close();
    rest = rest.slice(plan.planned);
  }
  return done;
}

describe('crash between the transactions of a batch, then redelivery', () => {
  const expected = reference();
  const companiesInBatch = 3;

  it.each(Array.from({ length: companiesInBatch + 1 }, (_, k) => k))(
    'after %i company transactions committed: same rows as an uninterrupted run',
    (k) => {
      const dir = tempDataDir();
      const clock = fixedClock();
      const first = ProjectionStore.open({ dataDir: dir, clockUs: clock });
      first.applyBatch(given);
      first.close();

      expect(crashAfter(dir, clock, batch, k)).toBe(k);

      // Redelivery of the whole batch (offsets were never committed).
      const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
      store.applyBatch(batch, { deadLetters });
      expect(dump(dir)).toEqual(expected);
      expect(controlRows(dir, 'dead_letters')).toHaveLength(2);

      // And once more, as after a crash between the control commit and the offset commit.
      const again = store.applyBatch(batch, { deadLetters });
      expect(again.applied).toBe(0);
      expect(dump(dir)).toEqual(expected);
      expect(controlRows(dir, 'dead_letters')).toHaveLength(2);
      store.close();
    },
  );

  it('the reference run has the expected shape', () => {
    expect(expected[A]?.sites).toEqual([]);
    expect(expected[B]?.sites).toMatchObject([{ id: id(1), name: 'Moved to B' }]);
    expect(expected[C]?.services).toMatchObject([{ id: id(6) }]);
    expect(expected[A]?.services).toEqual([]);
    expect(expected[C]?.sites).toEqual([]);
  });
});

/**
 * Moves that leave a TOASTed column out take it from the file the row left (apply-company.ts
 * readCarried): that file commits after the receiving one, so a crash between the two still finds
 * the row there. With a chain (A → B → C), a move there and back, and two rows swapping companies
 * (the batch is cut).
 */
describe('crash between the files of a move that carries values, then redelivery', () => {
  const LONG = (n: number) => `${n}`.repeat(6_000);
  const D = 'dddddddd-0000-4000-8000-00000000000d';
  const site = (n: number, company: string, lsn: number, fields: Record<string, string> = {}) =>
    makeUpsert(
      'sites',
      sampleRow('sites', { id: id(n), company_id: company, notes: LONG(n), ...fields }),
      lsn,
      {
        op: 'u',
        unavailable: fields.notes === undefined ? ['notes'] : [],
      },
    );
  const seed: Change[] = [1, 2, 3, 4].map((n) =>
    makeUpsert(
      'sites',
      sampleRow('sites', { id: id(n), company_id: [A, A, B, C][n - 1]!, notes: LONG(n) }),
      n,
    ),
  );
  const moves: Change[] = [
    site(1, B, 10), // A → B ...
    site(1, C, 11), // ... → C
    site(2, D, 12), // A → D ...
    site(2, A, 13), // ... and back
    site(3, A, 14), // B → A: with 1's A → B, a swap, so the batch is cut here
    site(4, D, 15, { notes: 'short' }), // C → D, carrying its value itself
    site(4, B, 16), // D → B
  ];
  const clock = fixedClock();
  const uninterrupted = (() => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch(seed);
    store.applyBatch(moves);
    store.close();
    return dump(dir);
  })();

  it('the uninterrupted run keeps every value and is cut once', () => {
    expect(uninterrupted[C]?.sites).toMatchObject([{ id: id(1), notes: LONG(1) }]);
    expect(uninterrupted[A]?.sites).toMatchObject([
      { id: id(2), notes: LONG(2) },
      { id: id(3), notes: LONG(3) },
    ]);
    expect(uninterrupted[B]?.sites).toMatchObject([{ id: id(4), notes: 'short' }]);
    expect(uninterrupted[D]?.sites).toEqual([]);
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch(seed);
    store.close();
    const control = new ControlFile(dir);
    expect(planBatch(moves, control, dir).planned).toBe(4);
    control.close();
  });

  const transactions = (() => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch(seed);
    store.close();
    return crashAfter(dir, clock, moves, Number.POSITIVE_INFINITY);
  })();

  it.each(Array.from({ length: transactions + 1 }, (_, k) => k))(
    'after %i company transactions committed: same rows as an uninterrupted run',
    (k) => {
      const dir = tempDataDir();
      const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
      store.applyBatch(seed);
      store.close();
      crashAfter(dir, clock, moves, k);

      const again = ProjectionStore.open({ dataDir: dir, clockUs: clock });
      again.applyBatch(moves);
      expect(dump(dir)).toEqual(uninterrupted);
      expect(again.applyBatch(moves).applied).toBe(0);
      expect(dump(dir)).toEqual(uninterrupted);
      again.close();
    },
  );
});
