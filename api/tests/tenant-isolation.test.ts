import { describe, expect, test } from 'vitest';
import { expectProblem } from './support/conformance.ts';
import { COMPANY, type CompanyIds, type CompanyName } from './support/fixture.ts';
import { fixtureAppPerFile } from './support/fixture-app.ts';
import { bearer } from './support/test-app.ts';

// Tenant isolation (docs/public-data-api-v1.md "Collection rules" 6, docs/architecture.md#guarantees):
// two companies, every endpoint, every id of the other company → 404 exactly like a missing id;
// lists never show the other's rows.

const api = fixtureAppPerFile();

const ITEMS: [string, string, keyof CompanyIds][] = [
  ['getSite', '/v1/sites', 'sites'],
  ['getService', '/v1/services', 'services'],
  ['getEquipment', '/v1/equipment', 'equipment'],
  ['getEquipmentCategory', '/v1/equipment-categories', 'categories'],
  ['getConsumable', '/v1/consumables', 'consumables'],
];
const LISTS: [string, keyof CompanyIds][] = [
  ['/v1/sites?include=contacts', 'sites'],
  ['/v1/services', 'services'],
  ['/v1/equipment?include=category', 'equipment'],
  ['/v1/equipment-categories', 'categories'],
  ['/v1/consumables', 'consumables'],
];

/** How each caller selects a company: a single-company key, or the multi-company key's header. */
const callers: [string, CompanyName, () => Record<string, string>][] = [
  ['key of A', 'A', () => bearer(api.f.keys.a)],
  ['key of B', 'B', () => bearer(api.f.keys.b)],
  ['multi key selecting A', 'A', () => ({ ...bearer(api.f.keys.multi), 'x-service-company': COMPANY.A })],
  ['multi key selecting B', 'B', () => ({ ...bearer(api.f.keys.multi), 'x-service-company': COMPANY.B })],
];

function stable(body: Record<string, unknown>) {
  const { request_id: _ignored, ...rest } = body;
  return rest;
}

describe.each(callers)('%s', (_name, own, headers) => {
  const other: CompanyName = own === 'A' ? 'B' : 'A';

  test.each(ITEMS)('%s: every id of the other company → 404 like a missing id', async (op, url, kind) => {
    const missing = await api.app.inject({
      url: `${url}/00000000-0000-4000-8000-00000000ffff`,
      headers: headers(),
    });
    expectProblem(missing, op, 404, 'not_found');
    for (const id of api.f.ids[other][kind]) {
      const response = await api.app.inject({
        url: `${url}/${id}?fields[${url.slice(4)}]=id`,
        headers: headers(),
      });
      expectProblem(response, op, 404, 'not_found');
      expect(stable(response.json())).toEqual(stable(missing.json()));
    }
    for (const id of api.f.ids[own][kind]) {
      expect((await api.app.inject({ url: `${url}/${id}`, headers: headers() })).statusCode).toBe(200);
    }
  });

  test.each(LISTS)('%s lists exactly its own company', async (url, kind) => {
    const response = await api.app.inject({ url, headers: headers() });
    const body = response.json();
    expect(body.data.map((row: { id: string }) => row.id)).toEqual([...api.f.ids[own][kind]].sort());
    // Nothing of the other company anywhere in the page, embedded relations included.
    for (const list of Object.values(api.f.ids[other])) {
      for (const id of list) expect(response.body).not.toContain(id);
    }
  });

  test('contacts of the other company never appear, even through include', async () => {
    const response = await api.app.inject({ url: '/v1/sites?include=contacts', headers: headers() });
    const contacts = response.json().data.flatMap((site: { contacts: { id: string }[] }) => site.contacts);
    expect(contacts.map((c: { id: string }) => c.id).sort()).toEqual([...api.f.ids[own].contacts].sort());
  });

  test('/v1/me names its own company', async () => {
    expect((await api.app.inject({ url: '/v1/me', headers: headers() })).json().data.company.id).toBe(
      COMPANY[own],
    );
  });
});
