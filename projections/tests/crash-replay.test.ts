import { describe, expect, it } from 'vitest';
import { applyCompanyOps } from '../src/apply/apply-company.ts';
import { CompanyFiles } from '../src/apply/company-files.ts';
import { ControlFile } from '../src/apply/control-file.ts';
import { planBatch } from '../src/apply/plan-batch.ts';
import { Tally } from '../src/apply/result.ts';
import { type Change, type DeadLetter, ProjectionStore } from '../src/index.ts';
import { makeDelete, makeTruncate, makeUpsert, sampleRow } from '../src/testing/index.ts';
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
  { topic: 'pda.public.sites', partition: 0, offset: '42', key: '{"id":1}', value: '{', reason: 'bad JSON' },
];

function reference(): ReturnType<typeof dump> {
  const dir = tempDataDir();
  const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock() });
  store.applyBatch(given);
  store.applyBatch(batch, { deadLetters });
  store.close();
  return dump(dir);
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

      // The interrupted attempt: plan, then only k company transactions, then the process "dies".
      const control = new ControlFile(dir);
      const files = new CompanyFiles(dir, 8, clock);
      const plan = planBatch(batch, control, dir);
      expect(plan.companies.size).toBe(companiesInBatch);
      for (const [companyId, ops] of [...plan.companies].slice(0, k)) {
        applyCompanyOps(files.get(companyId), ops, new Tally(), []);
      }
      files.closeAll();
      control.close();

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
