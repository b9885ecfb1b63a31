// Typed rows of the seeded tables, with the exact column names of dev-world/db/schema.sql.
// created_at/updated_at are left to the database (defaults + touch trigger), as in production.
// Money and coordinates are decimal strings (never JS floats); timestamps are ISO 8601 UTC strings.

export interface CompanyRow {
  id: string;
  name: string;
  currency: string;
}

export interface SiteRow {
  id: string;
  company_id: string;
  name: string;
  name_for_operators: string;
  site_reference: string;
  client_reference: string;
  client_company_id: string;
  notes: string;
  area: string | null;
  address_line1: string;
  address_line2: string;
  city: string;
  region: string;
  postal_code: string;
  country: string;
  latitude: string | null;
  longitude: string | null;
  coordinates_accuracy: string | null;
  geocoded_at: string | null;
}

export interface SiteContactRow {
  id: string;
  company_id: string;
  site_id: string;
  name: string;
  role: string;
  email: string;
  phone: string;
  phone_type: string;
}

export interface ServiceRow {
  id: string;
  company_id: string;
  name: string;
  name_for_operators: string;
  client_description: string;
  color: string;
  client_charge_type: string;
  client_rate_amount: string;
  client_rate_currency: string;
  client_minimum_minutes: number;
  subcontractor_charge_type: string;
  subcontractor_rate_amount: string;
  subcontractor_rate_currency: string;
  subcontractor_minimum_minutes: number;
}

export interface EquipmentCategoryRow {
  id: string;
  company_id: string;
  name: string;
  group_name: string;
  default_client_rate_amount: string;
  default_client_rate_currency: string;
  default_subcontractor_rate_amount: string;
  default_subcontractor_rate_currency: string;
}

export interface EquipmentRow {
  id: string;
  company_id: string;
  category_id: string;
  name: string;
  name_for_operators: string;
  client_description: string;
}

export interface ConsumableRow {
  id: string;
  company_id: string;
  name: string;
  name_for_operators: string;
  client_description: string;
  group_name: string;
  default_client_rate_amount: string;
  default_client_rate_currency: string;
  default_subcontractor_rate_amount: string;
  default_subcontractor_rate_currency: string;
}

export interface SeedRowByTable {
  companies: CompanyRow;
  equipment_categories: EquipmentCategoryRow;
  equipment: EquipmentRow;
  consumables: ConsumableRow;
  services: ServiceRow;
  sites: SiteRow;
  site_contacts: SiteContactRow;
}

export type SeedTable = keyof SeedRowByTable;

/** A generated row tagged with its table: the unit the generator yields and the writer consumes. */
export type SeedRow = { [T in SeedTable]: { table: T; row: SeedRowByTable[T] } }[SeedTable];

/** Insert order (foreign keys first) and each table's column order for COPY. */
export const SEED_COLUMNS: { readonly [T in SeedTable]: readonly (keyof SeedRowByTable[T])[] } = {
  companies: ['id', 'name', 'currency'],
  equipment_categories: [
    'id',
    'company_id',
    'name',
    'group_name',
    'default_client_rate_amount',
    'default_client_rate_currency',
    'default_subcontractor_rate_amount',
    'default_subcontractor_rate_currency',
  ],
  equipment: ['id', 'company_id', 'category_id', 'name', 'name_for_operators', 'client_description'],
  consumables: [
    'id',
    'company_id',
    'name',
    'name_for_operators',
    'client_description',
    'group_name',
    'default_client_rate_amount',
    'default_client_rate_currency',
    'default_subcontractor_rate_amount',
    'default_subcontractor_rate_currency',
  ],
  services: [
    'id',
    'company_id',
    'name',
    'name_for_operators',
    'client_description',
    'color',
    'client_charge_type',
    'client_rate_amount',
    'client_rate_currency',
    'client_minimum_minutes',
    'subcontractor_charge_type',
    'subcontractor_rate_amount',
    'subcontractor_rate_currency',
    'subcontractor_minimum_minutes',
  ],
  sites: [
    'id',
    'company_id',
    'name',
    'name_for_operators',
    'site_reference',
    'client_reference',
    'client_company_id',
    'notes',
    'area',
    'address_line1',
    'address_line2',
    'city',
    'region',
    'postal_code',
    'country',
    'latitude',
    'longitude',
    'coordinates_accuracy',
    'geocoded_at',
  ],
  site_contacts: ['id', 'company_id', 'site_id', 'name', 'role', 'email', 'phone', 'phone_type'],
};

export const SEED_TABLES = Object.keys(SEED_COLUMNS) as SeedTable[];
