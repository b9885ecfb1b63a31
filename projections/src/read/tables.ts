/**
 * The company-file tables the api pages over and their columns (migrations/company/001-initial.sql).
 * Row types mirror the columns the readers select; bookkeeping columns (_src_lsn) are never read.
 */

export interface SiteRow {
  id: string;
  name: string;
  name_for_operators: string;
  site_reference: string;
  client_reference: string;
  client_company_id: string;
  notes: string;
  area: number | null;
  address_line1: string;
  address_line2: string;
  city: string;
  region: string;
  postal_code: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
  coordinates_accuracy: string | null;
  geocoded_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SiteContactRow {
  id: string;
  site_id: string;
  name: string;
  role: string;
  email: string;
  phone: string;
  phone_type: string;
}

export interface ServiceRow {
  id: string;
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
  created_at: string;
  updated_at: string;
}

export interface EquipmentCategoryRow {
  id: string;
  name: string;
  group_name: string;
  default_client_rate_amount: string;
  default_client_rate_currency: string;
  default_subcontractor_rate_amount: string;
  default_subcontractor_rate_currency: string;
  created_at: string;
  updated_at: string;
}

export interface EquipmentRow {
  id: string;
  category_id: string;
  name: string;
  name_for_operators: string;
  client_description: string;
  created_at: string;
  updated_at: string;
}

export interface ConsumableRow {
  id: string;
  name: string;
  name_for_operators: string;
  client_description: string;
  group_name: string;
  default_client_rate_amount: string;
  default_client_rate_currency: string;
  default_subcontractor_rate_amount: string;
  default_subcontractor_rate_currency: string;
  created_at: string;
  updated_at: string;
}

export interface PageTableRows {
  sites: SiteRow;
  services: ServiceRow;
  equipment: EquipmentRow;
  equipment_categories: EquipmentCategoryRow;
  consumables: ConsumableRow;
}

export type PageTable = keyof PageTableRows;

/** Columns a page may be ordered by; all NOT NULL and indexed as (column, id). */
export const SORT_COLUMNS = ['id', 'name', 'created_at', 'updated_at'] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];

const SITE_COLUMNS = [
  'id',
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
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SiteRow)[];

const SERVICE_COLUMNS = [
  'id',
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
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ServiceRow)[];

const CATEGORY_COLUMNS = [
  'id',
  'name',
  'group_name',
  'default_client_rate_amount',
  'default_client_rate_currency',
  'default_subcontractor_rate_amount',
  'default_subcontractor_rate_currency',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof EquipmentCategoryRow)[];

const EQUIPMENT_COLUMNS = [
  'id',
  'category_id',
  'name',
  'name_for_operators',
  'client_description',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof EquipmentRow)[];

const CONSUMABLE_COLUMNS = [
  'id',
  'name',
  'name_for_operators',
  'client_description',
  'group_name',
  'default_client_rate_amount',
  'default_client_rate_currency',
  'default_subcontractor_rate_amount',
  'default_subcontractor_rate_currency',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ConsumableRow)[];

/** The selected columns per pageable table (the whitelist every generated statement draws from). */
export const PAGE_TABLE_COLUMNS: { readonly [T in PageTable]: readonly (keyof PageTableRows[T])[] } = {
  sites: SITE_COLUMNS,
  services: SERVICE_COLUMNS,
  equipment: EQUIPMENT_COLUMNS,
  equipment_categories: CATEGORY_COLUMNS,
  consumables: CONSUMABLE_COLUMNS,
};

export const SITE_CONTACT_COLUMNS = [
  'id',
  'site_id',
  'name',
  'role',
  'email',
  'phone',
  'phone_type',
] as const satisfies readonly (keyof SiteContactRow)[];
