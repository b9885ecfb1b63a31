import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { controlPath } from '@pda/projections/model';
import { openWriter } from '@pda/projections/write';
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { expectProblem } from './support/conformance.ts';
import { COMPANY, uuid } from './support/fixture.ts';
import { fixtureAppPerFile } from './support/fixture-app.ts';
import { bearer, testApp, testConfig } from './support/test-app.ts';

// Authentication and scoping (docs/public-data-api-v1.md, "Authentication"; api/README.md, "Errors").

const api = fixtureAppPerFile();

const get = (url: string, headers: Record<string, string> = {}) => api.app.inject({ url, headers });

/** A problem document without its per-request members, to compare answers. */
function stable(body: Record<string, unknown>): Record<string, unknown> {
  const { request_id: _ignored, ...rest } = body;
  return rest;
}

describe('missing, malformed and unknown keys: one answer', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['Bearer without a token', { authorization: 'Bearer' }],
    ['Bearer with an empty token', { authorization: 'Bearer ' }],
    ['two tokens', { authorization: 'Bearer abc def' }],
    ['token with forbidden characters', { authorization: 'Bearer svc_pk_<script>' }],
    ['SQL in the token', { authorization: "Bearer ' OR '1'='1" }],
    ['huge token', { authorization: `Bearer ${'a'.repeat(10_000)}` }],
    ['unknown key', { authorization: 'Bearer svc_pk_doesnotexist0000' }],
    ['the key hash instead of the key', { authorization: `Bearer ${'0'.repeat(64)}` }],
  ];
  test.each(cases)('%s → 401 unauthenticated with a Bearer challenge', async (_name, headers) => {
    const response = await get('/v1/sites', headers);
    expectProblem(response, 'listSites', 401, 'unauthenticated');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="public-data-api"/);
    expect(response.headers['ratelimit-limit']).toBeDefined();
  });

  test('the body does not tell a missing key from a malformed or an unknown one', async () => {
    const bodies = await Promise.all(
      [{}, { authorization: 'Bearer' }, { authorization: 'Bearer svc_pk_unknown' }].map(async (headers) =>
        stable((await get('/v1/me', headers)).json()),
      ),
    );
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  test('the scheme name is case-insensitive', async () => {
    expect((await get('/v1/me', { authorization: `bearer ${api.f.keys.a}` })).statusCode).toBe(200);
    expect((await get('/v1/me', { authorization: `BEARER ${api.f.keys.a}` })).statusCode).toBe(200);
  });

  test('a key is never accepted in the query string', async () => {
    const response = await get(`/v1/me?api_key=${api.f.keys.a}`);
    expectProblem(response, 'getMe', 401, 'unauthenticated');
    const withHeader = await get(`/v1/me?api_key=${api.f.keys.a}`, bearer(api.f.keys.a));
    expectProblem(withHeader, 'getMe', 400, 'invalid_parameter');
    expect(withHeader.json().errors).toEqual([{ parameter: 'api_key', detail: 'unknown query parameter' }]);
  });
});

describe('expiry and revocation', () => {
  test('a key past expires_at → 401 api_key_expired', async () => {
    const response = await get('/v1/me', bearer(api.f.keys.expired));
    expectProblem(response, 'getMe', 401, 'api_key_expired');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  test('a key past revokes_at → 401 api_key_revoked', async () => {
    expectProblem(await get('/v1/sites', bearer(api.f.keys.revoked)), 'listSites', 401, 'api_key_revoked');
  });

  test('a key in its rotation grace period works until revokes_at, then is refused', async () => {
    expect((await get('/v1/sites', bearer(api.f.keys.rotating))).statusCode).toBe(200);
    const later = await testApp(api.f.dataDir, { now: () => Date.parse('2999-01-01T00:00:00Z') });
    expectProblem(
      await later.inject({ url: '/v1/sites', headers: bearer(api.f.keys.rotating) }),
      'listSites',
      401,
      'api_key_revoked',
    );
    await later.close();
  });
});

describe('expiry and revocation: the boundaries, and timestamps that cannot be read', () => {
  const REVOKES_AT = Date.parse('2999-01-01T00:00:00Z'); // the fixture's rotating key

  test('a key stops working at exactly revokes_at, and works a millisecond before', async () => {
    for (const [nowMs, status] of [
      [REVOKES_AT - 1, 200],
      [REVOKES_AT, 401],
    ] as const) {
      const at = await testApp(api.f.dataDir, { now: () => nowMs });
      try {
        const response = await at.inject({ url: '/v1/me', headers: bearer(api.f.keys.rotating) });
        expect(response.statusCode, new Date(nowMs).toISOString()).toBe(status);
        if (status === 401) expect(response.json().code).toBe('api_key_revoked');
      } finally {
        await at.close();
      }
    }
  });

  test('an unreadable expires_at or revokes_at fails closed: the key is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-api-auth-'));
    cpSync(api.f.dataDir, dir, { recursive: true });
    const db = openWriter(controlPath(dir));
    // Two keys that can expire or be revoked only by the garbled value (both columns NULL).
    const [garbledExpiry, garbledRevocation] = db
      .prepare('SELECT id FROM api_keys WHERE expires_at IS NULL AND revokes_at IS NULL ORDER BY id LIMIT 2')
      .pluck()
      .all() as [string, string];
    db.prepare("UPDATE api_keys SET expires_at = 'not a time' WHERE id = ?").run(garbledExpiry);
    db.prepare("UPDATE api_keys SET revokes_at = '2999-13-45T99:00:00Z' WHERE id = ?").run(garbledRevocation);
    const hashes = db
      .prepare('SELECT id, key_sha256 FROM api_keys WHERE id IN (?, ?)')
      .all(garbledExpiry, garbledRevocation) as { id: string; key_sha256: string }[];
    db.close();
    const keyOf = (id: string) => {
      const hash = hashes.find((row) => row.id === id)?.key_sha256;
      return Object.values(api.f.keys).find((key) => createHash('sha256').update(key).digest('hex') === hash);
    };
    const garbled = await testApp(dir);
    try {
      const expired = keyOf(garbledExpiry);
      const revoked = keyOf(garbledRevocation);
      expect(expired, 'a fixture key with expires_at NULL').toBeDefined();
      expect(revoked, 'a fixture key with revokes_at NULL').toBeDefined();
      const a = await garbled.inject({ url: '/v1/me', headers: bearer(expired!) });
      const b = await garbled.inject({ url: '/v1/me', headers: bearer(revoked!) });
      expect([a.statusCode, b.statusCode]).toEqual([401, 401]);
      expect([a.json().code, b.json().code]).toEqual(['api_key_expired', 'api_key_revoked']);
    } finally {
      await garbled.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scopes', () => {
  test('identity endpoints need a valid key but no scope', async () => {
    expect((await get('/v1/me', bearer(api.f.keys.noScopes))).statusCode).toBe(200);
    expect((await get('/v1/reference/scopes', bearer(api.f.keys.noScopes))).statusCode).toBe(200);
  });

  test.each([
    ['listSites', '/v1/sites'],
    ['getSite', '/v1/sites/x1'],
    ['listServices', '/v1/services'],
    ['getService', '/v1/services/x1'],
    ['listEquipment', '/v1/equipment'],
    ['getEquipment', '/v1/equipment/x1'],
    ['listEquipmentCategories', '/v1/equipment-categories'],
    ['getEquipmentCategory', '/v1/equipment-categories/x1'],
    ['listConsumables', '/v1/consumables'],
    ['getConsumable', '/v1/consumables/x1'],
  ])('%s without its scope → 403 insufficient_scope (before looking anything up)', async (op, url) => {
    expectProblem(await get(url, bearer(api.f.keys.noScopes)), op, 403, 'insufficient_scope');
  });

  test('include=category also needs equipment-categories:read', async () => {
    const key = bearer(api.f.keys.noCategories);
    expect((await get('/v1/equipment', key)).statusCode).toBe(200);
    const list = await get('/v1/equipment?include=category', key);
    expectProblem(list, 'listEquipment', 403, 'insufficient_scope');
    expect(list.json().detail).toContain('equipment-categories:read');
    const item = await get(`/v1/equipment/${api.f.ids.A.equipment[0]}?include=category`, key);
    expectProblem(item, 'getEquipment', 403, 'insufficient_scope');
  });
});

describe('company selection', () => {
  test('a multi-company key without X-Service-Company → 400 company_selection_required', async () => {
    const response = await get('/v1/sites', bearer(api.f.keys.multi));
    expectProblem(response, 'listSites', 400, 'company_selection_required');
    expect(response.json().errors).toEqual([
      { parameter: 'X-Service-Company', detail: 'required for a key granted several companies' },
    ]);
  });

  test('a multi-company key selects among its companies', async () => {
    for (const name of ['A', 'B'] as const) {
      const response = await get('/v1/sites', {
        ...bearer(api.f.keys.multi),
        'x-service-company': COMPANY[name],
      });
      expect(response.json().data.map((row: { id: string }) => row.id)).toEqual(api.f.ids[name].sites);
      const me = await get('/v1/me', { ...bearer(api.f.keys.multi), 'x-service-company': COMPANY[name] });
      expect(me.json().data.company.id).toBe(COMPANY[name]);
    }
  });

  test('a company not granted, unknown or malformed → the same 403 company_not_available', async () => {
    const answers = [];
    for (const company of [COMPANY.C, uuid(0x99, 9), 'not-a-company', "' OR 1=1 --"]) {
      const response = await get('/v1/sites', { ...bearer(api.f.keys.multi), 'x-service-company': company });
      expectProblem(response, 'listSites', 403, 'company_not_available');
      answers.push(stable(response.json()));
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });

  test('a single-company key ignores X-Service-Company', async () => {
    const response = await get('/v1/sites', { ...bearer(api.f.keys.a), 'x-service-company': COMPANY.B });
    expect(response.json().data.map((row: { id: string }) => row.id)).toEqual(api.f.ids.A.sites);
  });

  test('a key with no company at all → 403 company_not_available', async () => {
    expectProblem(await get('/v1/me', bearer(api.f.keys.orphan)), 'getMe', 403, 'company_not_available');
  });
});

describe('health and version take no credential', () => {
  test.each([
    ['getHealth', '/v1/health'],
    ['getVersion', '/v1/version'],
  ])('%s answers 200 with no key and with a bad one', async (_op, url) => {
    expect((await get(url)).statusCode).toBe(200);
    expect((await get(url, { authorization: 'Bearer nonsense' })).statusCode).toBe(200);
  });
});

test('the key never reaches the logs', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logged = await buildApp(testConfig(api.f.dataDir), {
    loggerInstance: pino({ level: 'trace' }, sink),
  });
  await logged.inject({ url: '/v1/sites', headers: bearer(api.f.keys.a) });
  await logged.inject({ url: '/v1/sites', headers: bearer(api.f.keys.expired) });
  await logged.inject({ url: '/v1/nope', headers: bearer(api.f.keys.a) });
  await logged.close();
  expect(lines.length).toBeGreaterThan(0);
  for (const key of Object.values(api.f.keys)) expect(lines.join('')).not.toContain(key);
  // Every request log line carries the request id.
  expect(lines.filter((line) => line.includes('"req"')).every((line) => line.includes('"reqId"'))).toBe(true);
});
