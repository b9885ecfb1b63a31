import type { Change } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { describe, expect, it } from 'vitest';
import { createBackfillFilter } from '../src/live-rebuild/company-rebuild.ts';

const V = 'aaaaaaaa-0000-4000-8000-00000000000a';
const O = 'bbbbbbbb-0000-4000-8000-00000000000b';
const site = (
  id: string,
  company: string,
  lsn: number,
  fields: Record<string, string> = {},
  unavailable: string[] = [],
) => makeUpsert('sites', sampleRow('sites', { id, company_id: company, ...fields }), lsn, { unavailable });
const withoutNotes = (change: Change) => {
  if (change.kind !== 'upsert') return change;
  const { notes: _left, ...row } = change.row;
  return { ...change, row };
};
const notes = 'x'.repeat(1_500);
const r1 = '00000000-0000-4000-8000-000000000001';
const r2 = '00000000-0000-4000-8000-000000000002';

describe('createBackfillFilter', () => {
  it("passes the company's rows from their first change naming it, moves out and deletes included", () => {
    const pass = createBackfillFilter(V);
    expect(pass(site(r1, O, 1))).toBeUndefined(); // another company's row (so far)
    expect(pass(site(r1, V, 2))).toMatchObject({ row: { company_id: V } }); // moved in
    expect(pass(site(r1, O, 3))).toMatchObject({ row: { company_id: O } }); // moved out again: replayed
    expect(pass(site(r2, O, 4))).toBeUndefined();
    expect(pass(makeDelete('sites', { id: r2 }, 5))).toBeUndefined(); // never the company's
    expect(pass(makeDelete('sites', { id: r1 }, 5))).toMatchObject({ kind: 'delete' });
    expect(pass(makeUpsert('companies', { id: V, name: 'x', currency: 'USD' }, 6))).toBeUndefined();
  });

  it('fills unavailable long text from the latest value read for the row, in any company', () => {
    const pass = createBackfillFilter(V);
    expect(pass(site(r1, O, 1, { notes }))).toBeUndefined(); // remembered, not passed
    const moved = pass(withoutNotes(site(r1, V, 2, {}, ['notes'])));
    expect(moved).toMatchObject({ row: { notes }, unavailable: [] });
    // A later short value replaces the long one: nothing stale is filled in.
    pass(site(r1, V, 3, { notes: 'short' }));
    const later = pass(withoutNotes(site(r1, V, 4, {}, ['notes'])));
    expect(later).toMatchObject({ unavailable: ['notes'] });
    expect(later?.kind === 'upsert' && 'notes' in later.row).toBe(false);
  });
});
