import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Change } from '../src/model/index.ts';
import { companyPath, listCompanyFiles } from '../src/model/paths.ts';
import { openCompanyReader } from '../src/read/index.ts';
import { makeDelete, makeTruncate, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore, type TableCounts } from '../src/write/index.ts';
import { A, B, C, companyRows, controlRows, dump, fixedClock, id, tempDataDir } from './helpers.ts';

/**
 * Table-driven: `given` is applied as one batch, then `changes` as another; `expected` lists the
 * rows (subset of columns) of each table named, per file ('control' or a company id), and `counts`
 * the result of the `changes` batch. Every case is then applied again: nothing may change.
 */
interface Case {
  readonly name: string;
  readonly given: readonly Change[];
  readonly changes: readonly Change[];
  readonly expected: Record<string, Record<string, readonly Record<string, unknown>[]>>;
  readonly counts?: Record<string, Partial<TableCounts>>;
}

const S1 = id(1);
const S2 = id(2);
/** A value PostgreSQL stores out of line (TOAST): an update that leaves it unchanged omits it. */
const LONG = 'x'.repeat(6_000);
const site = (fields: Record<string, string | null>, lsn: number, options = {}) =>
  makeUpsert('sites', sampleRow('sites', { id: S1, company_id: A, ...fields }), lsn, options);
const company = (companyId: string, lsn: number) =>
  makeUpsert('companies', sampleRow('companies', { id: companyId }), lsn);

const cases: Case[] = [
  {
    name: 'insert maps source columns to projection columns',
    given: [],
    changes: [site({}, 10)],
    expected: {
      [A]: {
        sites: [
          {
            id: S1,
            name: 'Maple Plaza',
            area: 1250.5,
            latitude: 43.65107,
            longitude: -79.347015,
            _src_lsn: 10,
          },
        ],
      },
      control: { routes: [{ table_name: 'sites', id: S1, company_id: A, _src_lsn: 10 }] },
    },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'money stays an exact decimal string, minutes an integer',
    given: [],
    changes: [
      makeUpsert(
        'services',
        sampleRow('services', { id: S1, company_id: A, client_rate_amount: '1234567890.10' }),
        10,
      ),
    ],
    expected: {
      [A]: {
        services: [
          {
            id: S1,
            client_rate_amount: '1234567890.10',
            client_rate_currency: 'CAD',
            client_minimum_minutes: 30,
          },
        ],
      },
    },
  },
  {
    name: 'newer update replaces the row',
    given: [site({}, 10)],
    changes: [site({ name: 'Renamed' }, 11, { op: 'u' })],
    expected: { [A]: { sites: [{ id: S1, name: 'Renamed', _src_lsn: 11 }] } },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'updates keep every index right, whether the indexed columns change or not',
    given: [site({ name: 'Same' }, 10), site({ id: S2, name: 'Old name' }, 11)],
    changes: [
      site({ name: 'Same', notes: 'only notes changed' }, 12, { op: 'u' }),
      site({ id: S2, name: 'New name', updated_at: '2026-02-01T00:00:00.000000Z' }, 13, { op: 'u' }),
    ],
    expected: {
      [A]: {
        sites: [
          { id: S1, name: 'Same', notes: 'only notes changed', _src_lsn: 12 },
          { id: S2, name: 'New name', updated_at: '2026-02-01T00:00:00.000000Z', _src_lsn: 13 },
        ],
      },
    },
  },
  {
    name: 'older after newer: the newer stays',
    given: [site({ name: 'Newer' }, 20)],
    changes: [site({ name: 'Older' }, 15, { op: 'u' })],
    expected: { [A]: { sites: [{ id: S1, name: 'Newer', _src_lsn: 20 }] } },
    counts: { sites: { applied: 0, skipped: 1 } },
  },
  {
    name: 'same position twice: the second is skipped',
    given: [site({ name: 'First' }, 20)],
    changes: [site({ name: 'Duplicate' }, 20)],
    expected: { [A]: { sites: [{ id: S1, name: 'First' }] } },
    counts: { sites: { skipped: 1 } },
  },
  {
    name: 'key-only delete is routed to the company that holds the row',
    given: [site({}, 10), site({ id: S2, company_id: B }, 11)],
    changes: [makeDelete('sites', { id: S1 }, 12)],
    expected: {
      [A]: { sites: [], tombstones: [{ table_name: 'sites', id: S1, _src_lsn: 12 }] },
      [B]: { sites: [{ id: S2 }], tombstones: [] },
    },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'delete routed through a route made earlier in the same batch',
    given: [],
    changes: [site({}, 10), makeDelete('sites', { id: S1 }, 11)],
    expected: { [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 11 }] } },
    counts: { sites: { applied: 2 } },
  },
  {
    name: 'delete then a late older upsert: stays deleted',
    given: [site({}, 10), makeDelete('sites', { id: S1 }, 12)],
    changes: [site({ name: 'Late' }, 11, { op: 'u' })],
    expected: { [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 12 }] } },
    counts: { sites: { skipped: 1 } },
  },
  {
    name: 'key-only delete of a row without a route leaves an unrouted tombstone in control',
    given: [],
    changes: [makeDelete('sites', { id: S1 }, 12)],
    expected: { control: { routes: [], tombstones: [{ table_name: 'sites', id: S1, _src_lsn: 12 }] } },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'reordered replay: delete before its create (two batches), the late create stays out',
    given: [makeDelete('sites', { id: S1 }, 12)],
    changes: [site({ name: 'Late' }, 11)],
    expected: {
      [A]: { sites: [], tombstones: [{ table_name: 'sites', id: S1, _src_lsn: 12 }] },
      control: { routes: [{ id: S1, company_id: A }], tombstones: [] },
    },
    counts: { sites: { skipped: 1 } },
  },
  {
    name: 'reordered replay: delete, update, create newest first in one batch',
    given: [],
    changes: [
      makeDelete('sites', { id: S1 }, 13),
      site({ name: 'Updated' }, 12, { op: 'u' }),
      site({ name: 'Created' }, 11),
    ],
    expected: {
      [A]: { sites: [], tombstones: [{ table_name: 'sites', id: S1, _src_lsn: 13 }] },
      control: { routes: [{ id: S1, company_id: A }], tombstones: [] },
    },
    counts: { sites: { applied: 1, skipped: 2 } },
  },
  {
    name: 'a create newer than an unrouted tombstone brings the row back and drops the tombstone',
    given: [makeDelete('sites', { id: S1 }, 12)],
    changes: [site({ name: 'Again' }, 13)],
    expected: {
      [A]: { sites: [{ id: S1, name: 'Again', _src_lsn: 13 }], tombstones: [] },
      control: { routes: [{ id: S1, company_id: A, _src_lsn: 13 }], tombstones: [] },
    },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'TRUNCATE drops the unrouted tombstones at or below it, keeps newer ones',
    given: [makeDelete('sites', { id: S1 }, 12), makeDelete('sites', { id: S2 }, 30)],
    changes: [makeTruncate('sites', 20), site({ id: S2 }, 25)],
    expected: {
      [A]: { sites: [], tombstones: [{ table_name: 'sites', id: S2, _src_lsn: 30 }] },
      control: { tombstones: [], truncations: [{ table_name: 'sites', _src_lsn: 20 }] },
    },
    counts: { sites: { applied: 1, skipped: 1 } },
  },
  {
    name: 'an upsert newer than the tombstone brings the row back and removes the tombstone',
    given: [site({}, 10), makeDelete('sites', { id: S1 }, 12)],
    changes: [site({ name: 'Again' }, 13)],
    expected: { [A]: { sites: [{ id: S1, name: 'Again', _src_lsn: 13 }], tombstones: [] } },
  },
  {
    name: 'company_id changes: the row moves files, the old file keeps a tombstone',
    given: [site({}, 10)],
    changes: [site({ company_id: B, name: 'Moved' }, 20, { op: 'u' })],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: { sites: [{ id: S1, name: 'Moved', _src_lsn: 20 }] },
      control: { routes: [{ id: S1, company_id: B, _src_lsn: 20 }] },
    },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'a stale event naming the old company cannot move the row back',
    given: [site({}, 10), site({ company_id: B }, 20, { op: 'u' })],
    changes: [site({ name: 'Stale' }, 15, { op: 'u' })],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: { sites: [{ id: S1, _src_lsn: 20 }] },
      control: { routes: [{ id: S1, company_id: B, _src_lsn: 20 }] },
    },
    counts: { sites: { skipped: 1 } },
  },
  {
    name: 'a delete after a move goes to the new company',
    given: [site({}, 10), site({ company_id: B }, 20, { op: 'u' })],
    changes: [makeDelete('sites', { id: S1 }, 30)],
    expected: {
      [A]: { tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: { sites: [], tombstones: [{ id: S1, _src_lsn: 30 }] },
    },
  },
  {
    name: 'a move older than a delete, arriving after it (a reordered replay), cannot bring the row back',
    given: [site({}, 10), makeDelete('sites', { id: S1 }, 12)],
    changes: [site({ company_id: B, name: 'Moved earlier' }, 11, { op: 'u' })],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 12 }] },
      control: { routes: [{ id: S1, company_id: A, _src_lsn: 12 }] },
    },
    counts: { sites: { skipped: 1 } },
  },
  {
    name: 'unavailable columns keep the stored value',
    given: [site({ notes: 'Long TOASTed notes' }, 10)],
    changes: [site({ name: 'Renamed', notes: 'ignored' }, 11, { op: 'u', unavailable: ['notes'] })],
    expected: { [A]: { sites: [{ id: S1, name: 'Renamed', notes: 'Long TOASTed notes', _src_lsn: 11 }] } },
  },
  {
    name: 'unavailable columns of a row we never held get the empty value',
    given: [],
    changes: [site({}, 11, { op: 'u', unavailable: ['notes', 'latitude'] })],
    expected: { [A]: { sites: [{ id: S1, notes: '', latitude: null }] } },
  },
  {
    name: 'a move leaving a TOASTed column out takes its value from the file the row left',
    given: [site({ notes: LONG }, 10)],
    changes: [site({ company_id: B, name: 'Moved' }, 20, { op: 'u', unavailable: ['notes'] })],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: {
        sites: [{ id: S1, name: 'Moved', notes: LONG, _json: expect.stringContaining(`"notes":"${LONG}"`) }],
      },
      control: { routes: [{ id: S1, company_id: B, _src_lsn: 20 }] },
    },
    counts: { sites: { applied: 1 } },
  },
  {
    name: 'a move after an update of the column in the same batch takes the updated value',
    given: [site({ notes: 'Stored notes' }, 10)],
    changes: [
      site({ notes: LONG }, 11, { op: 'u' }),
      site({ company_id: B, name: 'Moved' }, 20, { op: 'u', unavailable: ['notes'] }),
    ],
    expected: { [A]: { sites: [] }, [B]: { sites: [{ id: S1, name: 'Moved', notes: LONG }] } },
    counts: { sites: { applied: 2 } },
  },
  {
    name: 'two moves in one batch (A → B → C): the value goes all the way',
    given: [site({ notes: LONG }, 10)],
    changes: [
      site({ company_id: B }, 20, { op: 'u', unavailable: ['notes'] }),
      site({ company_id: C, name: 'Moved twice' }, 21, { op: 'u', unavailable: ['notes', 'latitude'] }),
    ],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: { sites: [], tombstones: [{ id: S1, _src_lsn: 21 }] },
      [C]: { sites: [{ id: S1, name: 'Moved twice', notes: LONG, latitude: 43.65107, _src_lsn: 21 }] },
      control: { routes: [{ id: S1, company_id: C, _src_lsn: 21 }] },
    },
    counts: { sites: { applied: 2 } },
  },
  {
    name: 'a move there and back in one batch (A → B → A) keeps the value',
    given: [site({ notes: LONG }, 10)],
    changes: [
      site({ company_id: B }, 20, { op: 'u', unavailable: ['notes'] }),
      site({ name: 'Back' }, 21, { op: 'u', unavailable: ['notes'] }),
    ],
    expected: {
      [A]: { sites: [{ id: S1, name: 'Back', notes: LONG, _src_lsn: 21 }], tombstones: [] },
      [B]: { sites: [], tombstones: [{ id: S1, _src_lsn: 21 }] },
    },
    counts: { sites: { applied: 2 } },
  },
  {
    name: 'two rows swapping companies in one batch both keep their values (the batch is cut in two)',
    given: [site({ notes: LONG }, 10), site({ id: S2, company_id: B, notes: 'Other long notes' }, 11)],
    changes: [
      site({ company_id: B }, 20, { op: 'u', unavailable: ['notes'] }),
      site({ id: S2, company_id: A }, 21, { op: 'u', unavailable: ['notes'] }),
    ],
    expected: {
      [A]: { sites: [{ id: S2, notes: 'Other long notes', _src_lsn: 21 }], tombstones: [{ id: S1 }] },
      [B]: { sites: [{ id: S1, notes: LONG, _src_lsn: 20 }], tombstones: [{ id: S2 }] },
      control: {
        routes: [
          { id: S1, company_id: B, _src_lsn: 20 },
          { id: S2, company_id: A, _src_lsn: 21 },
        ],
      },
    },
    counts: { sites: { applied: 2 } },
  },
  {
    name: 'a move that arrives before its create has no value to take: empty, as any row first seen by an update',
    given: [],
    changes: [site({ company_id: B }, 20, { op: 'u', unavailable: ['notes'] }), site({ notes: LONG }, 10)],
    expected: {
      [B]: { sites: [{ id: S1, notes: '', _src_lsn: 20 }] },
      control: { routes: [{ id: S1, company_id: B, _src_lsn: 20 }] },
    },
    counts: { sites: { applied: 1, skipped: 1 } },
  },
  {
    name: 'a move after a delete and a re-create in the same batch takes the re-created value',
    given: [site({ notes: 'Deleted notes' }, 10)],
    changes: [
      makeDelete('sites', { id: S1 }, 11),
      site({ notes: LONG }, 12),
      site({ company_id: B }, 20, { op: 'u', unavailable: ['notes'] }),
    ],
    expected: {
      [A]: { sites: [], tombstones: [{ id: S1, _src_lsn: 20 }] },
      [B]: { sites: [{ notes: LONG }] },
    },
  },
  {
    name: 'TRUNCATE clears the table in every company file and its routes; older changes stay out',
    given: [site({}, 10), site({ id: S2, company_id: B }, 11), company(A, 1)],
    changes: [
      makeTruncate('sites', 50),
      site({ name: 'Before truncate' }, 40),
      site({ id: S2, company_id: B }, 60),
    ],
    expected: {
      // Each truncated row leaves a tombstone at the TRUNCATE (the deletions feed lists it); S2's
      // is gone again: a newer create removed it.
      [A]: {
        sites: [],
        tombstones: [{ table_name: 'sites', id: S1, _src_lsn: 50 }],
        truncations: [{ table_name: 'sites', _src_lsn: 50 }],
      },
      [B]: {
        sites: [{ id: S2, _src_lsn: 60 }],
        tombstones: [],
        truncations: [{ table_name: 'sites', _src_lsn: 50 }],
      },
      control: {
        routes: [{ table_name: 'sites', id: S2, company_id: B, _src_lsn: 60 }],
        truncations: [{ table_name: 'sites', _src_lsn: 50 }],
      },
    },
    counts: { sites: { applied: 2, skipped: 1 } },
  },
  {
    name: 'companies, api keys and grants land in control.sqlite; a company gets its file',
    given: [],
    changes: [
      company(A, 1),
      makeUpsert('api_keys', sampleRow('api_keys', { id: S1, scopes: ['sites:read', 'services:read'] }), 2),
      makeUpsert('api_key_companies', sampleRow('api_key_companies', { api_key_id: S1, company_id: A }), 3),
    ],
    expected: {
      control: {
        companies: [{ id: A, currency: 'CAD', _src_lsn: 1 }],
        api_keys: [{ id: S1, scopes: '["sites:read","services:read"]', expires_at: null }],
        api_key_companies: [{ api_key_id: S1, company_id: A, _src_lsn: 3 }],
      },
      [A]: { sites: [] },
    },
    counts: { companies: { applied: 1 }, api_keys: { applied: 1 }, api_key_companies: { applied: 1 } },
  },
  {
    name: 'a grant deleted by its composite key stays deleted against a late older insert',
    given: [
      makeUpsert('api_key_companies', sampleRow('api_key_companies', { api_key_id: S1, company_id: A }), 3),
    ],
    changes: [
      makeDelete('api_key_companies', { api_key_id: S1, company_id: A }, 5),
      makeUpsert('api_key_companies', sampleRow('api_key_companies', { api_key_id: S1, company_id: A }), 4),
    ],
    expected: {
      control: {
        api_key_companies: [],
        tombstones: [{ table_name: 'api_key_companies', id: `${S1}/${A}`, _src_lsn: 5 }],
      },
    },
    counts: { api_key_companies: { applied: 1, skipped: 1 } },
  },
  {
    name: 'invalid rows are refused and dead-lettered; the rest of the batch applies',
    given: [],
    changes: [
      site({ name: null }, 10),
      site({ id: S2, company_id: 'not-a-uuid' }, 11),
      makeUpsert('sites', sampleRow('sites', { id: id(3), company_id: A, area: 'lots' }), 12),
      site({ id: id(4) }, 13),
    ],
    expected: {
      [A]: { sites: [{ id: id(4) }] },
      control: {
        dead_letters: [
          { stage: 'apply', table_name: 'sites', reason: 'invalid value for sites.name (TEXT)' },
          { stage: 'apply', table_name: 'sites', reason: 'company_id is missing or not a uuid' },
          { stage: 'apply', table_name: 'sites', reason: 'invalid value for sites.area (REAL)' },
        ],
      },
    },
    counts: { sites: { applied: 1, rejected: 3 } },
  },
];

describe('applyBatch', () => {
  it.each(cases)('$name', ({ given, changes, expected, counts }) => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(), nowMs: () => 1 });
    store.applyBatch(given);
    const result = store.applyBatch(changes);

    for (const [file, tables] of Object.entries(expected)) {
      for (const [table, rows] of Object.entries(tables)) {
        const actual = file === 'control' ? controlRows(dir, table) : companyRows(dir, file, table);
        expect(actual, `${file} ${table}`).toMatchObject(rows);
      }
    }
    for (const [table, expectedCounts] of Object.entries(counts ?? {})) {
      expect(result.tables[table as keyof typeof result.tables], table).toMatchObject(expectedCounts);
    }

    // Every index agrees with its table (updates leave unchanged indexed columns out of SET).
    for (const file of listCompanyFiles(dir)) {
      const db = openCompanyReader(dir, file);
      expect(db.pragma('integrity_check', { simple: true }), file).toBe('ok');
      db.close();
    }

    // Apply twice → same rows (change times included), nothing applied the second time.
    const before = dump(dir, true);
    const again = store.applyBatch(changes);
    expect(again.applied).toBe(0);
    expect(dump(dir, true)).toEqual(before);
    store.close();
  });
});

describe('a move whose losing file does not hold the row (lost with the file, or refused there)', () => {
  it('has nothing to carry: the column gets its empty value, the move and its tombstone apply', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(), nowMs: () => 1 });
    store.applyBatch([site({ notes: LONG }, 10)]);
    const db = new Database(companyPath(dir, A));
    db.prepare('DELETE FROM sites WHERE id = ?').run(S1);
    db.close();

    const moved = [site({ company_id: B, name: 'Moved' }, 20, { op: 'u', unavailable: ['notes'] })];
    expect(store.applyBatch(moved)).toMatchObject({ applied: 1, rejected: 0 });
    expect(companyRows(dir, B, 'sites')).toMatchObject([{ id: S1, name: 'Moved', notes: '' }]);
    expect(companyRows(dir, A, 'tombstones')).toMatchObject([{ id: S1, _src_lsn: 20 }]);
    expect(store.applyBatch(moved).applied).toBe(0);
    store.close();
  });
});
