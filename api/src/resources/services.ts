import type { ServiceRow } from '@pda/projections';
import { type Json, money, type Resource, registered } from './resource.ts';

export const services: Resource<'services'> = {
  ...registered('services'),
  present: (_handle, rows) => rows.map(serviceJson),
};

function serviceJson(row: ServiceRow): Json {
  return {
    id: row.id,
    name: row.name,
    name_for_operators: row.name_for_operators,
    client_description: row.client_description,
    color: row.color,
    client: {
      charge_type: row.client_charge_type,
      rate: money(row.client_rate_amount, row.client_rate_currency),
      minimum_minutes: row.client_minimum_minutes,
    },
    subcontractor: {
      charge_type: row.subcontractor_charge_type,
      rate: money(row.subcontractor_rate_amount, row.subcontractor_rate_currency),
      minimum_minutes: row.subcontractor_minimum_minutes,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
