import { readContactsBySiteIds, type SiteContactRow, type SiteRow } from '@pda/projections';
import { type Json, type Resource, registered } from './resource.ts';

export const sites: Resource<'sites'> = {
  ...registered('sites'),
  present(handle, rows, include) {
    const contacts = include.has('contacts')
      ? readContactsBySiteIds(
          handle,
          rows.map((row) => row.id),
        )
      : undefined;
    return rows.map((row) => {
      const json = siteJson(row);
      if (contacts) json.contacts = (contacts.get(row.id) ?? []).map(contactJson);
      return json;
    });
  },
};

function siteJson(row: SiteRow): Json {
  return {
    id: row.id,
    name: row.name,
    name_for_operators: row.name_for_operators,
    site_reference: row.site_reference,
    client_reference: row.client_reference,
    client_company_id: row.client_company_id,
    notes: row.notes,
    area: row.area,
    address: {
      line1: row.address_line1,
      line2: row.address_line2,
      city: row.city,
      region: row.region,
      postal_code: row.postal_code,
      country: row.country,
    },
    coordinates: {
      latitude: row.latitude,
      longitude: row.longitude,
      accuracy: row.coordinates_accuracy,
      geocoded_at: row.geocoded_at,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function contactJson(row: SiteContactRow): Json {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    email: row.email,
    phone: row.phone,
    phone_type: row.phone_type,
  };
}
