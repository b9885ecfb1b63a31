/**
 * The captured tables' columns as Debezium sees them (ops/db/schema.sql), for building
 * real-shaped events in tests and the benchmark. Kinds: uuid, text, int, decimal(scale),
 * timestamptz, text[].
 */
import type { SourceTable } from '@pda/projections';

export type SourceColumnKind = 'uuid' | 'text' | 'int' | 'decimal' | 'timestamptz' | 'text[]';
export interface SourceColumn {
  readonly name: string;
  readonly kind: SourceColumnKind;
  readonly optional?: boolean;
  readonly scale?: number;
  readonly precision?: number;
}

const money = (name: string): SourceColumn => ({ name, kind: 'decimal', scale: 2, precision: 12 });
const text = (...names: string[]): SourceColumn[] => names.map((name) => ({ name, kind: 'text' }));
const stamps: SourceColumn[] = [
  { name: 'created_at', kind: 'timestamptz' },
  { name: 'updated_at', kind: 'timestamptz' },
];
const tenant = (...cols: SourceColumn[]): SourceColumn[] => [
  { name: 'id', kind: 'uuid' },
  { name: 'company_id', kind: 'uuid' },
  ...cols,
  ...stamps,
];

export const SOURCE_COLUMNS: Readonly<Record<SourceTable, readonly SourceColumn[]>> = {
  companies: [{ name: 'id', kind: 'uuid' }, ...text('name', 'currency'), ...stamps],
  api_keys: [
    { name: 'id', kind: 'uuid' },
    ...text('name', 'prefix', 'last_four', 'key_sha256'),
    { name: 'scopes', kind: 'text[]' },
    { name: 'expires_at', kind: 'timestamptz', optional: true },
    { name: 'revokes_at', kind: 'timestamptz', optional: true },
    ...stamps,
  ],
  api_key_companies: [{ name: 'api_key_id', kind: 'uuid' }, { name: 'company_id', kind: 'uuid' }, ...stamps],
  sites: tenant(
    ...text('name', 'name_for_operators', 'site_reference', 'client_reference', 'client_company_id', 'notes'),
    { ...money('area'), optional: true },
    ...text('address_line1', 'address_line2', 'city', 'region', 'postal_code', 'country'),
    { name: 'latitude', kind: 'decimal', scale: 6, precision: 9, optional: true },
    { name: 'longitude', kind: 'decimal', scale: 6, precision: 9, optional: true },
    { name: 'coordinates_accuracy', kind: 'text', optional: true },
    { name: 'geocoded_at', kind: 'timestamptz', optional: true },
  ),
  site_contacts: tenant(
    { name: 'site_id', kind: 'uuid' },
    ...text('name', 'role', 'email', 'phone', 'phone_type'),
  ),
  services: tenant(
    ...text('name', 'name_for_operators', 'client_description', 'color', 'client_charge_type'),
    money('client_rate_amount'),
    ...text('client_rate_currency'),
    { name: 'client_minimum_minutes', kind: 'int' },
    ...text('subcontractor_charge_type'),
    money('subcontractor_rate_amount'),
    ...text('subcontractor_rate_currency'),
    { name: 'subcontractor_minimum_minutes', kind: 'int' },
  ),
  equipment_categories: tenant(
    ...text('name', 'group_name'),
    money('default_client_rate_amount'),
    ...text('default_client_rate_currency'),
    money('default_subcontractor_rate_amount'),
    ...text('default_subcontractor_rate_currency'),
  ),
  equipment: tenant(
    { name: 'category_id', kind: 'uuid' },
    ...text('name', 'name_for_operators', 'client_description'),
  ),
  consumables: tenant(
    ...text('name', 'name_for_operators', 'client_description', 'group_name'),
    money('default_client_rate_amount'),
    ...text('default_client_rate_currency'),
    money('default_subcontractor_rate_amount'),
    ...text('default_subcontractor_rate_currency'),
  ),
};

export const PRIMARY_KEYS: Readonly<Record<SourceTable, readonly string[]>> = {
  companies: ['id'],
  api_keys: ['id'],
  api_key_companies: ['api_key_id', 'company_id'],
  sites: ['id'],
  site_contacts: ['id'],
  services: ['id'],
  equipment_categories: ['id'],
  equipment: ['id'],
  consumables: ['id'],
};
