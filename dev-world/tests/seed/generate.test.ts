import { loadTableSchema } from '@pda/schemas';
import { describe, expect, it } from 'vitest';
import { rowUuid } from '../../seed/ids.ts';
import {
  companyProfile,
  generateCompanyData,
  type SeedCounts,
  type SeedRow,
  type SeedRowByTable,
  type SeedTable,
  totalRows,
} from '../../seed/index.ts';

const counts: SeedCounts = {
  companies: 3,
  sites: 40,
  contactsPerSite: 2,
  services: 20, // more than the templates of one line of business: exercises the "(zone 2)" variants
  categories: 6,
  equipment: 15,
  consumables: 9,
};

const collect = (seed: number | string, c: SeedCounts = counts, run?: string) => [
  ...generateCompanyData(seed, c, run),
];

function byTable(rows: SeedRow[]): { [T in SeedTable]: SeedRowByTable[T][] } {
  const out = {
    companies: [],
    equipment_categories: [],
    equipment: [],
    consumables: [],
    services: [],
    sites: [],
    site_contacts: [],
  } as { [T in SeedTable]: SeedRowByTable[T][] };
  for (const r of rows) (out[r.table] as unknown[]).push(r.row);
  return out;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MONEY = /^\d{1,10}\.\d{2}$/; // numeric(12,2), non-negative

describe('generateCompanyData', () => {
  const rows = collect(42);
  const t = byTable(rows);

  it('gives the same rows, ids included, for the same seed', () => {
    expect(collect(42)).toEqual(rows);
    expect(collect('42')).toEqual(rows);
  });

  it('keeps the demo rows of seed 42 (change on purpose only, and say so in the commit)', () => {
    expect(t.companies.map((c) => `${c.id} ${c.name}`)).toEqual([
      '8636ac4a-64b0-461b-b5ce-09812b1dbcc8 Northern Edge Property Services',
      '57a79b3b-b3ce-4fa6-92da-9f14174bd14d Blizzard Snow Management',
      'e3a31632-7132-42ee-969b-ce6d633061ae Polar Bear Hausmeisterservice',
    ]);
    expect(t.sites[0]).toMatchObject({
      id: 'debe6633-cd1b-4290-bf57-4a7342ff46c5',
      latitude: '39.817593',
      longitude: '-104.960986',
      geocoded_at: '2025-04-05T13:07:52.015158Z',
    });
  });

  it('gives the same rows under other ids for another run of the same seed', () => {
    const again = collect(42, counts, 'run-2');
    expect(collect(42, counts, 'run-2')).toEqual(again);
    const ids = new Set(rows.map((r) => r.row.id));
    expect(again.some((r) => ids.has(r.row.id))).toBe(false);
    const idColumns = new Set(['id', 'company_id', 'site_id', 'category_id']);
    const withoutIds = (list: SeedRow[]) =>
      list.map(({ table, row }) => [table, Object.entries(row).filter(([column]) => !idColumns.has(column))]);
    expect(withoutIds(again)).toEqual(withoutIds(rows));
  });

  it('gives distinct ids to two companies of 60,000 contacts (32-bit PRNG keys collided here)', () => {
    const seen = new Set<string>();
    for (const company of [companyProfile(7, 0), companyProfile(7, 1)]) {
      for (let i = 0; i < 60_000; i++) seen.add(rowUuid(company.idSpace, 'site_contacts', i));
    }
    expect(seen.size).toBe(120_000);
  });

  it('gives different rows for a different seed', () => {
    const other = byTable(collect(43));
    const ids = new Set(t.sites.map((s) => s.id));
    expect(other.sites.some((s) => ids.has(s.id))).toBe(false);
    expect(other.companies.map((c) => c.id)).not.toEqual(t.companies.map((c) => c.id));
  });

  it('respects the counts, per company', () => {
    expect(rows).toHaveLength(totalRows(counts));
    for (const company of t.companies) {
      const of = <R extends { company_id: string }>(list: R[]) =>
        list.filter((r) => r.company_id === company.id);
      expect(of(t.sites)).toHaveLength(counts.sites);
      expect(of(t.site_contacts)).toHaveLength(counts.sites * counts.contactsPerSite);
      expect(of(t.services)).toHaveLength(counts.services);
      expect(of(t.equipment_categories)).toHaveLength(counts.categories);
      expect(of(t.equipment)).toHaveLength(counts.equipment);
      expect(of(t.consumables)).toHaveLength(counts.consumables);
    }
    expect(t.companies).toHaveLength(3);
  });

  it('yields rows in foreign-key order and with unique v4 uuids', () => {
    const ids = rows.map((r) => r.row.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    const seen = new Set<string>();
    for (const { table, row } of rows) {
      if (table !== 'companies') expect(seen.has(row.company_id), `${table} before its company`).toBe(true);
      if (table === 'site_contacts') expect(seen.has(row.site_id), 'contact before its site').toBe(true);
      if (table === 'equipment') expect(seen.has(row.category_id), 'equipment before category').toBe(true);
      seen.add(row.id);
    }
  });

  it('keeps references inside one company', () => {
    const owner = new Map(rows.map((r) => [r.row.id, 'company_id' in r.row ? r.row.company_id : r.row.id]));
    for (const c of t.site_contacts) expect(owner.get(c.site_id)).toBe(c.company_id);
    for (const e of t.equipment) expect(owner.get(e.category_id)).toBe(e.company_id);
  });

  it('makes the demo companies use USD, CAD and EUR, and prices in the company currency', () => {
    expect(t.companies.map((c) => c.currency)).toEqual(['USD', 'CAD', 'EUR']);
    const currency = new Map(t.companies.map((c) => [c.id, c.currency]));
    for (const s of t.services) {
      expect([s.client_rate_currency, s.subcontractor_rate_currency]).toEqual([
        currency.get(s.company_id),
        currency.get(s.company_id),
      ]);
    }
    for (const c of [...t.equipment_categories, ...t.consumables]) {
      expect(c.default_client_rate_currency).toBe(currency.get(c.company_id));
      expect(c.default_subcontractor_rate_currency).toBe(currency.get(c.company_id));
    }
  });

  it('produces values the DDL accepts', () => {
    for (const s of t.services) {
      expect(s.color).toMatch(/^#[0-9a-f]{6}$/);
      expect(['hourly', 'per_visit', 'per_push', 'seasonal']).toContain(s.client_charge_type);
      expect(['hourly', 'per_visit', 'per_push', 'seasonal']).toContain(s.subcontractor_charge_type);
      expect(s.client_rate_amount).toMatch(MONEY);
      expect(s.subcontractor_rate_amount).toMatch(MONEY);
      expect(Number.isInteger(s.client_minimum_minutes) && s.client_minimum_minutes >= 0).toBe(true);
      expect(s.name).not.toBe('');
    }
    for (const c of [...t.equipment_categories, ...t.consumables]) {
      expect(c.default_client_rate_amount).toMatch(MONEY);
      expect(c.default_subcontractor_rate_amount).toMatch(MONEY);
      expect(c.group_name).toMatch(/^[a-z_]+$/);
    }
    for (const s of t.sites) {
      expect(s.country).toMatch(/^[A-Z]{2}$/);
      if (s.area !== null) expect(s.area).toMatch(MONEY);
      const geocoded = [s.latitude, s.longitude, s.coordinates_accuracy, s.geocoded_at].map(
        (v) => v !== null,
      );
      expect(new Set(geocoded).size, 'coordinates are all set or all null').toBe(1);
      if (s.latitude !== null && s.longitude !== null) {
        expect(s.latitude).toMatch(/^-?\d{1,2}\.\d{6}$/);
        expect(s.longitude).toMatch(/^-?\d{1,3}\.\d{6}$/);
        expect(Math.abs(Number(s.latitude))).toBeLessThanOrEqual(90);
        expect(['rooftop', 'street', 'postal_code', 'manual']).toContain(s.coordinates_accuracy);
        expect(s.geocoded_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      }
    }
    for (const c of t.site_contacts) {
      expect(['mobile', 'office', 'home', 'other']).toContain(c.phone_type);
      if (c.email !== '') expect(c.email).toMatch(/^[a-z0-9.-]+@[a-z0-9-]+\.example$/);
    }
  });

  it('produces rows that the .avsc of each table accepts', () => {
    const stamps = { created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' };
    for (const { table, row } of rows) {
      const { type } = loadTableSchema(table);
      expect(type.isValid({ ...row, ...stamps }), `${table} ${row.id}`).toBe(true);
    }
  });

  it('builds each table independently of the other counts and companies', () => {
    const more = byTable(collect(42, { ...counts, sites: 5, contactsPerSite: 0, companies: 4 }));
    expect(more.services.slice(0, 3 * counts.services)).toEqual(t.services);
    expect(more.sites.filter((s) => s.company_id === t.companies[0]?.id)).toEqual(t.sites.slice(0, 5));
    expect(companyProfile(42, 2).row).toEqual(t.companies[2]);
  });

  it('refuses counts the schema cannot hold', () => {
    expect(() => collect(1, { ...counts, categories: 0 })).toThrow(/category/);
    expect(() => collect(1, { ...counts, sites: -1 })).toThrow(/sites/);
  });
});
