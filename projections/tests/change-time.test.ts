import { REPRESENTATION } from '@pda/schemas/registry';
import { describe, expect, it } from 'vitest';
import { makeDelete, makeTruncate, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { A, B, companyRows, fixedClock, id, tempDataDir } from './helpers.ts';

const SITE1 = id(1);
const SITE2 = id(2);
const CONTACT = id(10);
const CATEGORY = id(20);
const TRUCK = id(21);
const LOADER = id(22);
const OTHER = id(23);

const site = (siteId: string, lsn: number) =>
  makeUpsert('sites', sampleRow('sites', { id: siteId, company_id: A }), lsn);
const contact = (siteId: string, lsn: number, companyId = A) =>
  makeUpsert(
    'site_contacts',
    sampleRow('site_contacts', { id: CONTACT, company_id: companyId, site_id: siteId }),
    lsn,
  );
const category = (lsn: number, name = 'Plow trucks') =>
  makeUpsert(
    'equipment_categories',
    sampleRow('equipment_categories', { id: CATEGORY, company_id: A, name }),
    lsn,
  );
const equipment = (equipmentId: string, categoryId: string, lsn: number) =>
  makeUpsert(
    'equipment',
    sampleRow('equipment', { id: equipmentId, company_id: A, category_id: categoryId }),
    lsn,
  );

function times(dir: string, table: string): Record<string, number> {
  return Object.fromEntries(
    companyRows(dir, A, table, true).map((r) => [r.id as string, r._changed_us as number]),
  );
}

function setup() {
  const dir = tempDataDir();
  const clock = fixedClock(5_000_000);
  const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
  store.applyBatch([
    site(SITE1, 1),
    site(SITE2, 2),
    contact(SITE1, 3),
    category(4),
    equipment(TRUCK, CATEGORY, 5),
    equipment(LOADER, CATEGORY, 6),
    equipment(OTHER, id(99), 7),
  ]);
  return { dir, clock, store };
}

describe('projection change time', () => {
  it('is strictly increasing per file even when the clock stands still or goes back', () => {
    const { dir, clock, store } = setup();
    const first = Object.values(times(dir, 'equipment'));
    clock.set(1); // wall clock jumps back
    store.applyBatch([equipment(id(30), CATEGORY, 8), equipment(id(31), CATEGORY, 9)]);
    const later = times(dir, 'equipment');
    expect(later[id(30)]).toBeGreaterThan(Math.max(...first));
    expect(later[id(31)]).toBeGreaterThan(later[id(30)]!);
    store.close();
  });

  it('follows the clock when it is ahead of the last change time', () => {
    const { dir, clock, store } = setup();
    clock.set(9_000_000_000);
    store.applyBatch([site(SITE1, 50)]);
    expect(times(dir, 'sites')[SITE1]).toBe(9_000_000_000);
    store.close();
  });

  it('a category change moves the change time of its equipment only', () => {
    const { dir, store } = setup();
    const before = times(dir, 'equipment');
    store.applyBatch([category(40, 'Renamed')]);
    const after = times(dir, 'equipment');
    const categoryTime = times(dir, 'equipment_categories')[CATEGORY]!;
    expect(after[TRUCK]).toBeGreaterThan(categoryTime);
    expect(after[LOADER]).toBeGreaterThan(categoryTime);
    expect(after[OTHER]).toBe(before[OTHER]);
    store.close();
  });

  it('a category delete moves its equipment too', () => {
    const { dir, store } = setup();
    const before = times(dir, 'equipment');
    store.applyBatch([makeDelete('equipment_categories', { id: CATEGORY }, 40)]);
    expect(times(dir, 'equipment')[TRUCK]).toBeGreaterThan(before[TRUCK]!);
    store.close();
  });

  it('a contact change moves its site; a contact moving sites moves both', () => {
    const { dir, store } = setup();
    const before = times(dir, 'sites');
    store.applyBatch([
      makeUpsert(
        'site_contacts',
        sampleRow('site_contacts', { id: CONTACT, company_id: A, site_id: SITE1, name: 'New' }),
        40,
      ),
    ]);
    const afterEdit = times(dir, 'sites');
    expect(afterEdit[SITE1]).toBeGreaterThan(before[SITE1]!);
    expect(afterEdit[SITE2]).toBe(before[SITE2]);

    store.applyBatch([contact(SITE2, 41)]);
    const afterMove = times(dir, 'sites');
    expect(afterMove[SITE1]).toBeGreaterThan(afterEdit[SITE1]!);
    expect(afterMove[SITE2]).toBeGreaterThan(afterEdit[SITE2]!);
    store.close();
  });

  it('a contact delete (key only) and a contact moving company move the site it left', () => {
    const { dir, store } = setup();
    const before = times(dir, 'sites');
    store.applyBatch([makeDelete('site_contacts', { id: CONTACT }, 40)]);
    const afterDelete = times(dir, 'sites');
    expect(afterDelete[SITE1]).toBeGreaterThan(before[SITE1]!);

    store.applyBatch([contact(SITE1, 41)]); // back (newer than the tombstone)
    const back = times(dir, 'sites');
    store.applyBatch([contact(SITE1, 42, B)]); // moves to company B
    expect(times(dir, 'sites')[SITE1]).toBeGreaterThan(back[SITE1]!);
    expect(companyRows(dir, A, 'site_contacts')).toEqual([]);
    expect(companyRows(dir, B, 'site_contacts')).toMatchObject([{ id: CONTACT, site_id: SITE1 }]);
    store.close();
  });

  it('TRUNCATE of contacts moves every site; meta keeps the highest time handed out', () => {
    const { dir, store } = setup();
    const before = times(dir, 'sites');
    store.applyBatch([makeTruncate('site_contacts', 40)]);
    const after = times(dir, 'sites');
    expect(after[SITE1]).toBeGreaterThan(before[SITE1]!);
    expect(after[SITE2]).toBeGreaterThan(before[SITE2]!);
    const all = [
      ...Object.values(times(dir, 'sites')),
      ...Object.values(times(dir, 'equipment')),
      ...companyRows(dir, A, 'truncations', true).map((r) => r._changed_us as number),
    ];
    expect(companyRows(dir, A, 'meta', true)).toEqual([
      {
        lock: 1,
        company_id: A,
        last_changed_us: Math.max(...all),
        representation: REPRESENTATION.version,
        tombstones_since_us: 5_000_000, // the file's creation (tombstone-retention.test.ts)
        created_us: 5_000_000, // its generation, for sync tokens
      },
    ]);
    store.close();
  });
});
