import type { EquipmentCategoryRow } from '@pda/projections';
import { type Json, money, type Resource, registered } from './resource.ts';

export const equipmentCategories: Resource<'equipment_categories'> = {
  ...registered('equipment-categories'),
  present: (_handle, rows) => rows.map(categoryJson),
};

export function categoryJson(row: EquipmentCategoryRow): Json {
  return {
    id: row.id,
    name: row.name,
    group: row.group_name,
    default_rates: {
      client: money(row.default_client_rate_amount, row.default_client_rate_currency),
      subcontractor: money(row.default_subcontractor_rate_amount, row.default_subcontractor_rate_currency),
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
