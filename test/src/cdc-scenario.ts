// One fixed sequence of writes touching every captured table, shared by the CDC e2e test (which
// asserts the events) and test/scripts/capture-fixtures.ts (which saves them). Fresh uuids per run,
// so runs never collide and each run's events are found by key.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SOURCE_TABLES, TENANT_TABLES, type TenantTable } from '@pda/projections/model';
import type pg from 'pg';
import { inTransaction } from './stack-env.ts';

/** Every captured source table, in the order the scenario writes them (the one list, from projections). */
export const capturedTables = SOURCE_TABLES;
export type CapturedTable = (typeof capturedTables)[number];

export interface ScenarioIds {
  company: string;
  otherCompany: string;
  apiKey: string;
  site: string;
  siteWithoutArea: string;
  contact: string;
  service: string;
  category: string;
  equipment: string;
  consumable: string;
}

export const newScenarioIds = (): ScenarioIds => ({
  company: randomUUID(),
  otherCompany: randomUUID(),
  apiKey: randomUUID(),
  site: randomUUID(),
  siteWithoutArea: randomUUID(),
  contact: randomUUID(),
  service: randomUUID(),
  category: randomUUID(),
  equipment: randomUUID(),
  consumable: randomUUID(),
});

/** > 2 KB of incompressible text: PostgreSQL moves it out of line (TOAST), the case where an
 * update that does not touch it arrives as `__debezium_unavailable_value`. */
export const largeNotes = (): string => randomBytes(6000).toString('base64');

// Values the e2e test checks byte for byte after the JsonConverter round trip.
export const values = {
  area: '1234.50',
  latitude: '40.748817',
  longitude: '-73.985656', // negative: the precise decimal is two's complement
  geocodedAtSql: '2024-01-15 10:30:00.123456+01',
  geocodedAtIso: '2024-01-15T09:30:00.123456Z',
  serviceRate: '85.00',
  updatedServiceRate: '92.75',
} as const;

export async function insertRows(pool: pg.Pool, ids: ScenarioIds, notes: string): Promise<void> {
  const keyHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const statements: Array<[string, unknown[]]> = [
    [
      'INSERT INTO companies (id, name, currency) VALUES ($1, $2, $3)',
      [ids.company, 'Northwind Snow & Ice', 'USD'],
    ],
    [
      'INSERT INTO companies (id, name, currency) VALUES ($1, $2, $3)',
      [ids.otherCompany, 'Maple Grounds', 'CAD'],
    ],
    [
      `INSERT INTO api_keys (id, name, last_four, key_sha256, scopes, expires_at)
       VALUES ($1, 'fixture key', 'ab12', $2, $3, '2030-01-01T00:00:00Z')`,
      [ids.apiKey, keyHash, ['sites:read', 'services:read']],
    ],
    ['INSERT INTO api_key_companies (api_key_id, company_id) VALUES ($1, $2)', [ids.apiKey, ids.company]],
    [
      `INSERT INTO sites (id, company_id, name, notes, area, address_line1, city, region, postal_code,
                          latitude, longitude, coordinates_accuracy, geocoded_at)
       VALUES ($1, $2, 'Empire Plaza lot', $3, $4, '350 5th Ave', 'New York', 'NY', '10118', $5, $6, 'rooftop', $7)`,
      [ids.site, ids.company, notes, values.area, values.latitude, values.longitude, values.geocodedAtSql],
    ],
    [
      "INSERT INTO sites (id, company_id, name, notes) VALUES ($1, $2, 'Depot yard', 'gate code 4411')",
      [ids.siteWithoutArea, ids.company],
    ],
    [
      `INSERT INTO site_contacts (id, company_id, site_id, name, role, email, phone)
       VALUES ($1, $2, $3, 'Dana Ruiz', 'facility manager', 'dana@example.com', '+1 212 555 0101')`,
      [ids.contact, ids.company, ids.site],
    ],
    [
      `INSERT INTO services (id, company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
                             client_minimum_minutes, subcontractor_charge_type, subcontractor_rate_amount,
                             subcontractor_rate_currency)
       VALUES ($1, $2, 'Plowing', 'hourly', $3, 'USD', 60, 'hourly', '60.50', 'USD')`,
      [ids.service, ids.company, values.serviceRate],
    ],
    [
      `INSERT INTO equipment_categories (id, company_id, name, group_name, default_client_rate_amount,
                                         default_client_rate_currency, default_subcontractor_rate_amount,
                                         default_subcontractor_rate_currency)
       VALUES ($1, $2, 'Plow trucks', 'vehicles', '120.00', 'USD', '95.00', 'USD')`,
      [ids.category, ids.company],
    ],
    [
      "INSERT INTO equipment (id, company_id, category_id, name) VALUES ($1, $2, $3, 'Truck 7 (F-550)')",
      [ids.equipment, ids.company, ids.category],
    ],
    [
      `INSERT INTO consumables (id, company_id, name, group_name, default_client_rate_amount,
                                default_client_rate_currency, default_subcontractor_rate_amount,
                                default_subcontractor_rate_currency)
       VALUES ($1, $2, 'Rock salt (per ton)', 'de_icing', '0.15', 'USD', '0.10', 'USD')`,
      [ids.consumable, ids.company],
    ],
  ];
  await inTransaction(pool, statements);
}

/** SELECTs for the snapshot connector: only this run's rows of the first company. */
export function snapshotSelects(ids: ScenarioIds): Record<CapturedTable, string> {
  const byCompany = (table: string) => `SELECT * FROM public.${table} WHERE company_id = '${ids.company}'`;
  return {
    companies: `SELECT * FROM public.companies WHERE id = '${ids.company}'`,
    api_keys: `SELECT * FROM public.api_keys WHERE id = '${ids.apiKey}'`,
    api_key_companies: `SELECT * FROM public.api_key_companies WHERE api_key_id = '${ids.apiKey}'`,
    ...(Object.fromEntries(TENANT_TABLES.map((table) => [table, byCompany(table)])) as Record<
      TenantTable,
      string
    >),
  };
}

export async function updateRows(pool: pg.Pool, ids: ScenarioIds): Promise<void> {
  const updates: Array<[string, unknown[]]> = [
    ["UPDATE companies SET name = 'Northwind Snow & Ice LLC' WHERE id = $1", [ids.company]],
    ["UPDATE api_keys SET revokes_at = '2029-06-30T12:00:00Z' WHERE id = $1", [ids.apiKey]],
    // A primary-key change: Debezium emits a delete (+ tombstone) of the old key and a create.
    [
      'UPDATE api_key_companies SET company_id = $2 WHERE api_key_id = $1 AND company_id = $3',
      [ids.apiKey, ids.otherCompany, ids.company],
    ],
    // Leaves the TOASTed notes untouched → `__debezium_unavailable_value` under default identity.
    ["UPDATE sites SET name = 'Empire Plaza lot (north)' WHERE id = $1", [ids.site]],
    ['UPDATE sites SET area = $2, latitude = $3 WHERE id = $1', [ids.siteWithoutArea, '0.01', '-0.000001']],
    ["UPDATE site_contacts SET phone = '+1 212 555 0199' WHERE id = $1", [ids.contact]],
    ['UPDATE services SET client_rate_amount = $2 WHERE id = $1', [ids.service, values.updatedServiceRate]],
    ["UPDATE equipment_categories SET default_client_rate_amount = '125.00' WHERE id = $1", [ids.category]],
    ["UPDATE equipment SET name = 'Truck 7 (F-550, blade 9ft)' WHERE id = $1", [ids.equipment]],
    ["UPDATE consumables SET default_client_rate_amount = '0.17' WHERE id = $1", [ids.consumable]],
  ];
  for (const [sql, params] of updates) await pool.query(sql, params);
}

export async function deleteRows(pool: pg.Pool, ids: ScenarioIds): Promise<void> {
  const deletes: Array<[string, unknown[]]> = [
    ['DELETE FROM equipment WHERE id = $1', [ids.equipment]],
    ['DELETE FROM equipment_categories WHERE id = $1', [ids.category]],
    ['DELETE FROM site_contacts WHERE id = $1', [ids.contact]],
    ['DELETE FROM sites WHERE id = ANY($1)', [[ids.site, ids.siteWithoutArea]]],
    ['DELETE FROM services WHERE id = $1', [ids.service]],
    ['DELETE FROM consumables WHERE id = $1', [ids.consumable]],
    ['DELETE FROM api_key_companies WHERE api_key_id = $1', [ids.apiKey]],
    ['DELETE FROM api_keys WHERE id = $1', [ids.apiKey]],
    ['DELETE FROM companies WHERE id = ANY($1)', [[ids.company, ids.otherCompany]]],
  ];
  await inTransaction(pool, deletes);
}

/** Events the stack's connector emits for the writes above, per `<table>:<op>`. */
// biome-ignore format: one table per line reads better
export const expectedStreamCounts: Record<string, number> = {
  'companies:c': 2, 'companies:u': 1, 'companies:d': 2, 'companies:tombstone': 2,
  'api_keys:c': 1, 'api_keys:u': 1, 'api_keys:d': 1, 'api_keys:tombstone': 1,
  'api_key_companies:c': 2, 'api_key_companies:d': 2, 'api_key_companies:tombstone': 2,
  'sites:c': 2, 'sites:u': 2, 'sites:d': 2, 'sites:tombstone': 2,
  ...Object.fromEntries(
    ['site_contacts', 'services', 'equipment_categories', 'equipment', 'consumables'].flatMap((t) => [
      [`${t}:c`, 1], [`${t}:u`, 1], [`${t}:d`, 1], [`${t}:tombstone`, 1],
    ]),
  ),
};

/** `r` events of the snapshot connector: one per row of the first company. */
export const expectedSnapshotCounts: Record<string, number> = Object.fromEntries(
  capturedTables.map((t) => [`${t}:r`, t === 'sites' ? 2 : 1]),
);

export const scenarioKeyIds = (ids: ScenarioIds): Set<string> => new Set(Object.values(ids));
