import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readApiKeyByHash, readCompany, readIngestState } from '../../src/read/control.ts';
import { readById, readRowsWhereIn } from '../../src/read/items.ts';
import { openCompanyReader, openControlReader } from '../../src/read/open-readers.ts';
import { type PageRequest, readPage } from '../../src/read/page.ts';
import { ReadHandle } from '../../src/read/read-handle.ts';
import { buildProjection } from '../../src/testing/build-projection.ts';
import { makeUpsert } from '../../src/testing/make-change.ts';
import { sampleRow } from '../../src/testing/sample-rows.ts';

// The readers the api pages with, over a file built through the apply path.

const COMPANY = '00000000-0000-4000-8000-0000000000c1';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const NAMES = ['b', 'a', 'c', 'a', 'b', 'c', 'a']; // ties on purpose
let dir: string;
let company: ReadHandle;
let control: ReadHandle;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pda-read-'));
  let lsn = 1;
  const tenant = { company_id: COMPANY };
  buildProjection(
    dir,
    [
      makeUpsert('companies', sampleRow('companies', { id: COMPANY, name: 'C1' }), lsn++),
      makeUpsert(
        'api_keys',
        sampleRow('api_keys', { id: id(900), key_sha256: sha('k'), scopes: ['sites:read', 'x:y'] }),
        lsn++,
      ),
      makeUpsert(
        'api_key_companies',
        sampleRow('api_key_companies', { api_key_id: id(900), ...tenant }),
        lsn++,
      ),
      ...NAMES.map((name, i) =>
        makeUpsert('sites', sampleRow('sites', { id: id(i + 1), name, ...tenant }), lsn++),
      ),
      makeUpsert(
        'site_contacts',
        sampleRow('site_contacts', { id: id(101), site_id: id(2), ...tenant }),
        lsn++,
      ),
      makeUpsert(
        'site_contacts',
        sampleRow('site_contacts', { id: id(100), site_id: id(2), ...tenant }),
        lsn++,
      ),
      makeUpsert(
        'equipment_categories',
        sampleRow('equipment_categories', { id: id(200), ...tenant }),
        lsn++,
      ),
    ],
    { clockUs: () => 1_000_000 },
  );
  company = new ReadHandle(openCompanyReader(dir, COMPANY));
  control = new ReadHandle(openControlReader(dir));
});

afterAll(() => {
  company.close();
  control.close();
  rmSync(dir, { recursive: true, force: true });
});

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const page = (request: Partial<PageRequest>) =>
  readPage(company, 'sites', {
    sort: [{ column: 'id', descending: false }],
    limit: 3,
    direction: 'after',
    ...request,
  });
const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

describe('readPage', () => {
  test('first page, then after its last row, then before a row; hasMore looks one row ahead', () => {
    const first = page({});
    expect(ids(first.rows)).toEqual([id(1), id(2), id(3)]);
    expect(first.hasMore).toBe(true);
    const last = page({ position: [id(6)] });
    expect(ids(last.rows)).toEqual([id(7)]);
    expect(last.hasMore).toBe(false);
    const back = page({ direction: 'before', position: [id(5)] });
    expect(ids(back.rows)).toEqual([id(2), id(3), id(4)]);
    expect(back.hasMore).toBe(true);
  });

  test('a mixed-direction sort resumes exactly after the position, ties broken by id', () => {
    const sort = [
      { column: 'name' as const, descending: true },
      { column: 'id' as const, descending: false },
    ];
    // c: 3, 6; b: 1, 5; a: 2, 4, 7
    expect(ids(page({ sort, limit: 10 }).rows)).toEqual([id(3), id(6), id(1), id(5), id(2), id(4), id(7)]);
    expect(ids(page({ sort, position: ['b', id(1)] }).rows)).toEqual([id(5), id(2), id(4)]);
    expect(ids(page({ sort, direction: 'before', position: ['a', id(4)] }).rows)).toEqual([
      id(1),
      id(5),
      id(2),
    ]);
  });

  test('changedSinceUs filters on the projection change time', () => {
    expect(page({ changedSinceUs: 0, limit: 10 }).rows).toHaveLength(7);
    expect(page({ changedSinceUs: 10_000_000_000, limit: 10 }).rows).toHaveLength(0);
  });

  test('one prepared statement per query shape and handle', () => {
    const a = company.statement('probe', () => 'SELECT 1');
    const b = company.statement('probe', () => 'SELECT 2');
    expect(b).toBe(a);
  });

  test('snapshot runs reads in one transaction and always ends it', () => {
    expect(company.snapshot(() => company.db.inTransaction)).toBe(true);
    expect(company.db.inTransaction).toBe(false);
    expect(() =>
      company.snapshot(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(company.db.inTransaction).toBe(false);
    expect(company.snapshot(() => company.snapshot(() => 42))).toBe(42);
  });

  test('a sort that does not end with id or a wrong position length is a programming error', () => {
    expect(() => page({ sort: [{ column: 'name', descending: false }] })).toThrow('end with id');
    expect(() => page({ position: ['x', 'y'] })).toThrow('one value per sort key');
  });
});

describe('items and relations', () => {
  test('by id, and rows grouped by a column value (categories by id, contacts by site id)', () => {
    expect(readById(company, 'sites', id(3))?.name).toBe('c');
    expect(readById(company, 'sites', 'nope')).toBeUndefined();
    expect([
      ...readRowsWhereIn(company, 'equipment_categories', 'id', [id(200), id(999)], ['id']).keys(),
    ]).toEqual([id(200)]);
    const contacts = readRowsWhereIn(company, 'site_contacts', 'site_id', [id(1), id(2)], ['id', 'site_id']);
    expect(contacts.get(id(1))).toBeUndefined();
    expect(contacts.get(id(2))?.map((contact) => contact.id)).toEqual([id(100), id(101)]);
    expect(readRowsWhereIn(company, 'site_contacts', 'site_id', [], ['id']).size).toBe(0);
  });

  test('a column the table does not have is a programming error', () => {
    expect(() => readRowsWhereIn(company, 'site_contacts', 'nope', [id(1)], ['id'])).toThrow(
      'site_contacts has no column nope',
    );
  });
});

describe('control', () => {
  test('a key by hash with its grants and scopes; unknown hash → undefined', () => {
    expect(readApiKeyByHash(control, sha('k'))).toMatchObject({
      id: id(900),
      prefix: 'svc_pk_',
      scopes: ['sites:read', 'x:y'],
      companyIds: [COMPANY],
      expiresAt: null,
      revokesAt: null,
    });
    expect(readApiKeyByHash(control, sha('other'))).toBeUndefined();
  });

  test('company and ingest state', () => {
    expect(readCompany(control, COMPANY)).toEqual({ id: COMPANY, name: 'C1', currency: 'CAD' });
    expect(readCompany(control, id(5))).toBeUndefined();
    expect(readIngestState(control).lastBatchAtMs).toEqual(expect.any(Number));
  });
});
