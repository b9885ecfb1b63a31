import type { ConsumableRow } from '@pda/projections';
import { type Json, money, type Resource, registered } from './resource.ts';

export const consumables: Resource<'consumables'> = {
  ...registered('consumables'),
  present: (_handle, rows) => rows.map(consumableJson),
};

function consumableJson(row: ConsumableRow): Json {
  return {
    id: row.id,
    name: row.name,
    name_for_operators: row.name_for_operators,
    client_description: row.client_description,
    group: row.group_name,
    default_rates: {
      client: money(row.default_client_rate_amount, row.default_client_rate_currency),
      subcontractor: money(row.default_subcontractor_rate_amount, row.default_subcontractor_rate_currency),
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
