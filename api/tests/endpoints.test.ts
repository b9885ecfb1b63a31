import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCOPES } from '@pda/schemas/registry';
import { describe, expect, test } from 'vitest';
import { expectConforms, expectProblem } from './support/conformance.ts';
import { COMPANY } from './support/fixture.ts';
import { fixtureAppPerFile } from './support/fixture-app.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// Every endpoint answers with exactly the shapes of docs/public-data-api-v1.md, validated against
// the contract (openapi.yaml).

const api = fixtureAppPerFile();

const get = (url: string, key: string = api.f.keys.a, headers: Record<string, string> = {}) =>
  api.app.inject({ url, headers: { ...bearer(key), ...headers } });

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('collections', () => {
  const cases = [
    ['listSites', '/v1/sites', 'sites'],
    ['listServices', '/v1/services', 'services'],
    ['listEquipment', '/v1/equipment', 'equipment'],
    ['listEquipmentCategories', '/v1/equipment-categories', 'categories'],
    ['listConsumables', '/v1/consumables', 'consumables'],
  ] as const;
  test.each(cases)(
    '%s: { data, meta.page, links } with every record of the company',
    async (op, url, ids) => {
      const response = await get(url);
      expect(response.statusCode).toBe(200);
      expectConforms(response, op);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'links', 'meta']);
      expect(body.data.map((row: { id: string }) => row.id)).toEqual([...api.f.ids.A[ids]].sort());
      // The last page hands out the next run's sync token (api/tests/sync-token.test.ts).
      expect(body.meta).toEqual({
        page: { limit: 50, has_more: false },
        sync: { token: expect.any(String), as_of: expect.stringMatching(ISO_UTC) },
      });
      expect(body.links).toEqual({
        self: `${TEST_BASE_URL}${url}?limit=50`,
        next: null,
        prev: null,
        sync: `${TEST_BASE_URL}${url}?limit=50&sync=${body.meta.sync.token}`,
      });
      for (const row of body.data) {
        expect(row.created_at).toMatch(ISO_UTC);
        expect(row.updated_at).toMatch(ISO_UTC);
      }
    },
  );
});

describe('items', () => {
  const cases = [
    ['getSite', '/v1/sites', 'sites'],
    ['getService', '/v1/services', 'services'],
    ['getEquipment', '/v1/equipment', 'equipment'],
    ['getEquipmentCategory', '/v1/equipment-categories', 'categories'],
    ['getConsumable', '/v1/consumables', 'consumables'],
  ] as const;
  test.each(cases)('%s: { data } by id, 404 not_found for an unknown id', async (op, url, ids) => {
    const id = api.f.ids.A[ids][0]!;
    const response = await get(`${url}/${id}`);
    expect(response.statusCode).toBe(200);
    expectConforms(response, op);
    expect(Object.keys(response.json())).toEqual(['data']);
    expect(response.json().data.id).toBe(id);
    expectProblem(await get(`${url}/00000000-0000-4000-8000-000000000000`), op, 404, 'not_found');
  });
});

describe('shapes', () => {
  test('a site: nested address and coordinates, numbers as numbers, contacts absent unless included', async () => {
    const site = (await get(`/v1/sites/${api.f.ids.A.sites[0]}`)).json().data;
    expect(site).toEqual({
      id: api.f.ids.A.sites[0],
      name: 'A site 1',
      name_for_operators: 'Maple Plaza lot B',
      site_reference: 'S-1001',
      client_reference: 'C-77',
      client_company_id: '',
      notes: 'Salt the east entrance first.',
      area: 1250.5,
      address: {
        line1: '100 Maple Ave',
        line2: '',
        city: 'Toronto',
        region: 'ON',
        postal_code: 'M5V 2T6',
        country: 'CA',
      },
      coordinates: {
        latitude: 43.65107,
        longitude: -79.347015,
        accuracy: 'rooftop',
        geocoded_at: '2026-01-31T12:00:00.000000Z',
      },
      created_at: '2026-01-31T12:00:00.000000Z',
      updated_at: '2026-01-31T12:00:00.000000Z',
    });
    expect('contacts' in site).toBe(false);
  });

  test('include=contacts embeds the site contacts (an empty list for a site without any)', async () => {
    const response = await get('/v1/sites?include=contacts');
    expectConforms(response, 'listSites');
    const [first, second, third] = response.json().data;
    expect(first.contacts.map((c: { id: string }) => c.id)).toEqual([
      api.f.ids.A.contacts[0],
      api.f.ids.A.contacts[1],
    ]);
    expect(first.contacts[0]).toEqual({
      id: api.f.ids.A.contacts[0],
      name: 'Dana Property',
      role: 'Property manager',
      email: 'dana@example.com',
      phone: '+1 416 555 0100',
      phone_type: 'mobile',
    });
    expect(second.contacts.map((c: { id: string }) => c.id)).toEqual([api.f.ids.A.contacts[2]]);
    expect(third.contacts).toEqual([]);
    const item = (await get(`/v1/sites/${api.f.ids.A.sites[0]}?include=contacts`)).json().data;
    expect(item.contacts).toHaveLength(2);
  });

  test('a service: client and subcontractor charges with Money as decimal strings', async () => {
    const service = (await get(`/v1/services/${api.f.ids.A.services[0]}`)).json().data;
    expect(service.client).toEqual({
      charge_type: 'per_push',
      rate: { amount: '125.00', currency: 'CAD' },
      minimum_minutes: 30,
    });
    expect(service.subcontractor).toEqual({
      charge_type: 'hourly',
      rate: { amount: '80.00', currency: 'CAD' },
      minimum_minutes: 60,
    });
    expect(service.color).toBe('#1f77b4');
  });

  test('equipment: category absent unless included; included category carries default rates; unknown → null', async () => {
    const plain = (await get('/v1/equipment')).json().data;
    expect(plain.every((row: object) => !('category' in row))).toBe(true);
    const response = await get('/v1/equipment?include=category');
    expectConforms(response, 'listEquipment');
    const [first, , third] = response.json().data;
    expect(first.category).toEqual({
      id: api.f.ids.A.categories[0],
      name: 'A category 1',
      group: 'vehicles',
      default_rates: {
        client: { amount: '150.00', currency: 'CAD' },
        subcontractor: { amount: '95.00', currency: 'CAD' },
      },
      created_at: '2026-01-31T12:00:00.000000Z',
      updated_at: '2026-01-31T12:00:00.000000Z',
    });
    expect(third.category_id).toBe(api.f.missingCategoryId);
    expect(third.category).toBeNull();
    const item = await get(`/v1/equipment/${api.f.ids.A.equipment[1]}?include=category`);
    expectConforms(item, 'getEquipment');
    expect(item.json().data.category.id).toBe(api.f.ids.A.categories[1]);
  });

  test('a consumable and a category: group and default rates', async () => {
    const consumable = (await get(`/v1/consumables/${api.f.ids.A.consumables[0]}`)).json().data;
    expect(Object.keys(consumable)).toEqual([
      'id',
      'name',
      'name_for_operators',
      'client_description',
      'group',
      'default_rates',
      'created_at',
      'updated_at',
    ]);
    expect(consumable.default_rates.client).toEqual({ amount: '210.00', currency: 'CAD' });
    const category = (await get(`/v1/equipment-categories/${api.f.ids.A.categories[0]}`)).json().data;
    expect(category.group).toBe('vehicles');
  });
});

describe('fields', () => {
  test('fields[sites] keeps id and the listed members only', async () => {
    const response = await get('/v1/sites?fields[sites]=name,address');
    expectConforms(response, 'listSites');
    for (const row of response.json().data) expect(Object.keys(row)).toEqual(['id', 'name', 'address']);
  });

  test('an included relation is kept even when fields does not list it', async () => {
    const response = await get('/v1/sites?fields[sites]=name&include=contacts');
    for (const row of response.json().data) expect(Object.keys(row)).toEqual(['id', 'name', 'contacts']);
    const equipment = await get(
      `/v1/equipment/${api.f.ids.A.equipment[0]}?fields[equipment]=name&include=category`,
    );
    expect(Object.keys(equipment.json().data)).toEqual(['id', 'name', 'category']);
  });

  test('a relation named in fields but not included stays absent', async () => {
    const row = (await get(`/v1/sites/${api.f.ids.A.sites[0]}?fields[sites]=contacts`)).json().data;
    expect(row).toEqual({ id: api.f.ids.A.sites[0] });
  });

  test.each([
    ['/v1/services?fields[services]=client', 'listServices', ['id', 'client']],
    [
      '/v1/equipment-categories?fields[equipment-categories]=group',
      'listEquipmentCategories',
      ['id', 'group'],
    ],
    [
      '/v1/consumables?fields[consumables]=default_rates,name',
      'listConsumables',
      ['id', 'name', 'default_rates'],
    ],
    ['/v1/equipment?fields[equipment]=id', 'listEquipment', ['id']],
  ])('%s', async (url, op, keys) => {
    const response = await get(url);
    expectConforms(response, op);
    for (const row of response.json().data) expect(Object.keys(row)).toEqual(keys);
  });

  test('items accept fields too', async () => {
    const response = await get(`/v1/services/${api.f.ids.A.services[0]}?fields[services]=color`);
    expectConforms(response, 'getService');
    expect(response.json().data).toEqual({ id: api.f.ids.A.services[0], color: '#1f77b4' });
  });
});

describe('identity', () => {
  test('/v1/me: the key (identifier only, never the key) and its company', async () => {
    const response = await get('/v1/me');
    expectConforms(response, 'getMe');
    expect(response.json()).toEqual({
      data: {
        api_key: {
          id: api.f.keyIds.a,
          name: 'key a',
          identifier: `svc_pk_…${api.f.keys.a.slice(-4)}`,
          scopes: [
            'sites:read',
            'services:read',
            'equipment:read',
            'equipment-categories:read',
            'consumables:read',
          ],
          expires_at: null,
          revokes_at: null,
        },
        company: { id: COMPANY.A, name: 'Company A', currency: 'CAD' },
      },
    });
    expect(response.body).not.toContain(api.f.keys.a);
  });

  test('/v1/me shows revokes_at during a rotation grace period', async () => {
    const response = await get('/v1/me', api.f.keys.rotating);
    expect(response.json().data.api_key.revokes_at).toBe('2999-01-01T00:00:00.000000Z');
  });

  test('/v1/reference/scopes: the whole vocabulary, unpaginated, with a count', async () => {
    const response = await get('/v1/reference/scopes', api.f.keys.noScopes);
    expectConforms(response, 'listScopes');
    const body = response.json();
    // Every scope of the registry (test/cross-package/registry-consistency.test.ts checks it against the contract).
    expect(body.meta).toEqual({ count: SCOPES.length });
    expect(body.data.map((entry: { scope: string }) => entry.scope)).toEqual(
      SCOPES.map((entry) => entry.scope),
    );
    expect(body.data).toContainEqual({
      scope: 'sites:read',
      resource: 'sites',
      ability: 'read',
      domain: 'sites',
    });
    // v1's scopes keep their names and order; a new resource only appends its own.
    expect(body.data.map((entry: { scope: string }) => entry.scope).slice(0, 5)).toEqual([
      'sites:read',
      'services:read',
      'equipment:read',
      'equipment-categories:read',
      'consumables:read',
    ]);
  });
});

describe('health and version', () => {
  test('health needs no key and says ok, without tenant data', async () => {
    const response = await api.app.inject({ url: '/v1/health' });
    expect(response.statusCode).toBe(200);
    expectConforms(response, 'getHealth');
    const body = response.json();
    expect(body.status).toBe('ok');
    // The dependency answers and nothing else: no figure (the staleness is the admin port's).
    expect(body).toEqual({ status: 'ok', checks: { projections: 'ok' } });
    expect(response.body).not.toContain(COMPANY.A);
  });

  test('health is degraded (503) when ingest has been quiet longer than the configured bound', async () => {
    const stale = await testApp(api.f.dataDir, {
      env: { API_HEALTH_MAX_STALENESS_S: '60' },
      now: () => Date.now() + 3_600_000,
    });
    const response = await stale.inject({ url: '/v1/health' });
    expect(response.statusCode).toBe(503);
    expectConforms(response, 'getHealth');
    expect(response.json()).toMatchObject({ status: 'degraded', checks: { projections: 'degraded' } });
    await stale.close();
  });

  test('health is down (503) when the projections cannot be read', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'pda-api-empty-'));
    const down = await testApp(empty);
    const response = await down.inject({ url: '/v1/health' });
    expect(response.statusCode).toBe(503);
    expectConforms(response, 'getHealth');
    expect(response.json()).toEqual({ status: 'down', checks: { projections: 'down' } });
    await down.close();
    rmSync(empty, { recursive: true });
  });

  test('version: nulls when the build was not stamped', async () => {
    const response = await api.app.inject({ url: '/v1/version' });
    expectConforms(response, 'getVersion');
    expect(response.json()).toEqual({ commit_hash: null, branch: null, tag: null, deployed_at: null });
  });

  test('version: the stamp written by the deploy script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-api-stamp-'));
    const file = join(dir, 'build-info.json');
    writeFileSync(
      file,
      JSON.stringify({
        commit_hash: 'abc123',
        branch: 'main',
        tag: null,
        deployed_at: 'Sat 31 Jan 2026 12:00:00 UTC',
      }),
    );
    const stamped = await testApp(api.f.dataDir, { env: { API_BUILD_INFO_FILE: file } });
    const response = await stamped.inject({ url: '/v1/version' });
    expectConforms(response, 'getVersion');
    expect(response.json()).toEqual({
      commit_hash: 'abc123',
      branch: 'main',
      tag: null,
      deployed_at: 'Sat 31 Jan 2026 12:00:00 UTC',
    });
    await stamped.close();
    rmSync(dir, { recursive: true });
  });

  test('HEAD is served for every GET', async () => {
    const response = await api.app.inject({
      method: 'HEAD',
      url: '/v1/sites',
      headers: bearer(api.f.keys.a),
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('');
  });
});
