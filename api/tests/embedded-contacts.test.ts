import { buildProjection, makeUpsert, sampleRow } from '@pda/projections/testing';
import { RESOURCES } from '@pda/schemas/registry';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectConforms } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// include=contacts embeds at most 100 contacts per site, the first by id; a site with more carries
// contacts_truncated: true (docs/public-data-api-v1.md, "Embedded contacts"). Sites with 100 or
// fewer are unchanged.

const MAX = RESOURCES.sites.relations.contacts?.maxEmbedded ?? 0;
let f: Fixture;
let app: FastifyInstance;
/** Company A's third site (no contacts in the shared fixture) gets MAX + 3 of them. */
let crowded: string;
let contactIds: string[];

beforeAll(async () => {
  f = createFixture();
  crowded = f.ids.A.sites[2]!;
  // Made in descending id order: the embedded ones must be the first by id, not by arrival.
  contactIds = Array.from({ length: MAX + 3 }, (_, i) => uuid(0x2c, i + 1));
  buildProjection(
    f.dataDir,
    [...contactIds]
      .reverse()
      .map((id, i) =>
        makeUpsert(
          'site_contacts',
          sampleRow('site_contacts', { id, site_id: crowded, company_id: COMPANY.A, name: `contact ${i}` }),
          10_000 + i,
        ),
      ),
  );
  app = await testApp(f.dataDir);
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

const get = (url: string) => app.inject({ url, headers: bearer(f.keys.a) });
type Site = { id: string; contacts?: { id: string }[]; contacts_truncated?: boolean };

describe('include=contacts', () => {
  test('is bounded at 100 per site', () => {
    expect(MAX).toBe(100);
  });

  test('a site with more than the bound: the first by id, and contacts_truncated: true', async () => {
    const response = await get('/v1/sites?include=contacts');
    expect(response.statusCode).toBe(200);
    expectConforms(response, 'listSites');
    const sites: Site[] = response.json().data;
    const site = sites.find((s) => s.id === crowded);
    expect(site?.contacts?.map((c) => c.id)).toEqual(contactIds.slice(0, MAX));
    expect(site?.contacts_truncated).toBe(true);
    // The marker comes right after the contacts: the member order of the stored document.
    const raw = response.body.slice(response.body.indexOf(`"id":"${crowded}"`));
    expect(raw).toMatch(/"contacts":\[[^\]]*\],"contacts_truncated":true\}/);
  });

  test('the other sites keep every contact and carry no marker (the v1 shape)', async () => {
    const sites: Site[] = (await get('/v1/sites?include=contacts')).json().data;
    const others = sites.filter((s) => s.id !== crowded);
    expect(others.map((s) => s.contacts?.map((c) => c.id))).toEqual([
      [f.ids.A.contacts[0], f.ids.A.contacts[1]],
      [f.ids.A.contacts[2]],
    ]);
    for (const site of others) expect('contacts_truncated' in site).toBe(false);
  });

  test('the marker stays with its contacts under fields[sites], and only with them', async () => {
    const response = await get('/v1/sites?include=contacts&fields[sites]=name');
    expectConforms(response, 'listSites');
    const site = (response.json().data as Site[]).find((s) => s.id === crowded);
    expect(Object.keys(site ?? {})).toEqual(['id', 'name', 'contacts', 'contacts_truncated']);
    const without = (await get('/v1/sites')).json().data as Site[];
    for (const s of without) expect(Object.keys(s)).not.toContain('contacts_truncated');
  });

  test('the item endpoint embeds the same', async () => {
    const response = await get(`/v1/sites/${crowded}?include=contacts`);
    expectConforms(response, 'getSite');
    const site: Site = response.json().data;
    expect(site.contacts).toHaveLength(MAX);
    expect(site.contacts_truncated).toBe(true);
  });

  test('a site with exactly the bound is not marked', async () => {
    // MAX - 1 more for company A's second site (1 contact in the fixture): MAX in all.
    const second = f.ids.A.sites[1]!;
    buildProjection(
      f.dataDir,
      Array.from({ length: MAX - 1 }, (_, i) =>
        makeUpsert(
          'site_contacts',
          sampleRow('site_contacts', { id: uuid(0x2d, i + 1), site_id: second, company_id: COMPANY.A }),
          20_000 + i,
        ),
      ),
    );
    const site: Site = (await get(`/v1/sites/${second}?include=contacts`)).json().data;
    expect(site.contacts).toHaveLength(MAX);
    expect('contacts_truncated' in site).toBe(false);
  });
});
