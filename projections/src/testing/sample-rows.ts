import { TABLES } from '@pda/schemas/registry';
import type { ColumnValue, Row, SourceTable } from '../model/change.ts';

/**
 * Complete, plausible source rows (as ingest decodes them) for tests: pass the ids and whatever the
 * test is about, the other columns get fixed values. Decimals are strings, timestamps ISO 8601 UTC.
 * A table without hand-written defaults below gets values made from its registry columns
 * (generatedRow), so a new table needs no edit here (docs/adding-a-table.md).
 */

const AT = '2026-01-31T12:00:00.000000Z';

const DEFAULTS: Partial<Record<SourceTable, Record<string, ColumnValue>>> = {
  companies: { name: 'Northern Snow & Ice Ltd', currency: 'CAD', created_at: AT, updated_at: AT },
  api_keys: {
    name: 'ERP export',
    prefix: 'svc_pk_',
    last_four: 'a1b2',
    key_sha256: '0'.repeat(64),
    scopes: ['sites:read'],
    expires_at: null,
    revokes_at: null,
    created_at: AT,
    updated_at: AT,
  },
  api_key_companies: { created_at: AT, updated_at: AT },
  sites: {
    name: 'Maple Plaza',
    name_for_operators: 'Maple Plaza lot B',
    site_reference: 'S-1001',
    client_reference: 'C-77',
    client_company_id: '',
    notes: 'Salt the east entrance first.',
    area: '1250.50',
    address_line1: '100 Maple Ave',
    address_line2: '',
    city: 'Toronto',
    region: 'ON',
    postal_code: 'M5V 2T6',
    country: 'CA',
    latitude: '43.651070',
    longitude: '-79.347015',
    coordinates_accuracy: 'rooftop',
    geocoded_at: AT,
    created_at: AT,
    updated_at: AT,
  },
  site_contacts: {
    name: 'Dana Property',
    role: 'Property manager',
    email: 'dana@example.com',
    phone: '+1 416 555 0100',
    phone_type: 'mobile',
    created_at: AT,
    updated_at: AT,
  },
  services: {
    name: 'Plowing',
    name_for_operators: 'Plow lot',
    client_description: 'Plowing per push',
    color: '#1f77b4',
    client_charge_type: 'per_push',
    client_rate_amount: '125.00',
    client_rate_currency: 'CAD',
    client_minimum_minutes: 30,
    subcontractor_charge_type: 'hourly',
    subcontractor_rate_amount: '80.00',
    subcontractor_rate_currency: 'CAD',
    subcontractor_minimum_minutes: 60,
    created_at: AT,
    updated_at: AT,
  },
  equipment_categories: {
    name: 'Plow trucks',
    group_name: 'vehicles',
    default_client_rate_amount: '150.00',
    default_client_rate_currency: 'CAD',
    default_subcontractor_rate_amount: '95.00',
    default_subcontractor_rate_currency: 'CAD',
    created_at: AT,
    updated_at: AT,
  },
  equipment: {
    name: 'Truck 12',
    name_for_operators: 'T12',
    client_description: 'F-550 with 9 ft plow',
    created_at: AT,
    updated_at: AT,
  },
  consumables: {
    name: 'Rock salt',
    name_for_operators: 'Salt',
    client_description: 'Bulk rock salt per tonne',
    group_name: 'de_icing',
    default_client_rate_amount: '210.00',
    default_client_rate_currency: 'CAD',
    default_subcontractor_rate_amount: '150.00',
    default_subcontractor_rate_currency: 'CAD',
    created_at: AT,
    updated_at: AT,
  },
};

/** A full source row of `table`: defaults overlaid with `fields` (ids, company_id, the field under test). */
export function sampleRow(table: SourceTable, fields: Row): Row {
  return { ...(DEFAULTS[table] ?? generatedRow(table)), ...fields };
}

/**
 * Values for every projected column of `table` from its registry type: NULL where the column
 * may be NULL, the fixed timestamp for `*_at`, text `sample <column>`, numbers 0. The key and
 * company_id come from the caller, as with the hand-written defaults.
 */
export function generatedRow(table: SourceTable): Record<string, ColumnValue> {
  const row: Record<string, ColumnValue> = {};
  for (const [column, type] of Object.entries(TABLES[table].columns)) {
    if (type.endsWith('?')) row[column] = null;
    else if (column.endsWith('_at')) row[column] = AT;
    else row[column] = type === 'text' ? `sample ${column}` : 0;
  }
  return row;
}
