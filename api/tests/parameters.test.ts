import { describe, expect, test } from 'vitest';
import { signCursor } from '../src/collection/cursor.ts';
import { expectConforms, expectProblem } from './support/conformance.ts';
import { COMPANY } from './support/fixture.ts';
import { fixtureAppPerFile } from './support/fixture-app.ts';
import { bearer, TEST_CURSOR_SECRET } from './support/test-app.ts';

// Collection parameter rules (api/README.md, "Decisions where the spec is silent") and hostile
// input: every bad request gets a documented problem document naming its parameter, never a 500.

const api = fixtureAppPerFile();

const get = (url: string, key: string = api.f.keys.a) => api.app.inject({ url, headers: bearer(key) });
const ids = (body: { data: { id: string }[] }) => body.data.map((row) => row.id);
const cursorOf = (link: string) => new URL(link).searchParams.get('cursor')!;

async function expectInvalid(url: string, parameter: string, op = 'listSites', code = 'invalid_parameter') {
  const response = await get(url);
  expectProblem(response, op, 400, code);
  expect(response.json().errors.map((entry: { parameter: string }) => entry.parameter)).toContain(parameter);
  return response;
}

describe('limit', () => {
  test.each([
    ['0', 1],
    ['-5', 1],
    ['1', 1],
    ['2', 2],
    ['200', 200],
    ['201', 200],
    ['1000000', 200],
  ])('limit=%s is clamped to %i', async (limit, used) => {
    const response = await get(`/v1/sites?limit=${limit}`);
    expectConforms(response, 'listSites');
    expect(response.json().meta.page.limit).toBe(used);
    expect(response.json().data).toHaveLength(Math.min(used, 3));
  });

  test.each(['abc', '1.5', '', '1e2', '0x10', ' 5', '99999999999', '1;DROP TABLE sites'])(
    'limit=%j → 400 invalid_parameter naming limit',
    async (limit) => {
      await expectInvalid(`/v1/sites?limit=${encodeURIComponent(limit)}`, 'limit');
    },
  );
});

// Every parameter takes one value: a repeat is refused as a repeat, not with the type's message
// (a follower appending `wait` to a links.next that already carries it was told "must be an integer").
describe('a repeated parameter', () => {
  const REPEATED = 'given 2 times; give it once';

  test.each([
    ['/v1/changes?wait=1&wait=2', 'wait', 'listChanges'],
    ['/v1/changes?limit=1&wait=1&wait=1', 'wait', 'listChanges'],
    ['/v1/sites?limit=1&limit=2', 'limit', 'listSites'],
    ['/v1/sites?sort=id&sort=name', 'sort', 'listSites'],
    [
      '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z&filter[updated_since]=x',
      'filter[updated_since]',
      'listSites',
    ],
    ['/v1/changes?filter[type]=sites&filter%5Btype%5D=sites', 'filter[type]', 'listChanges'],
  ])('%s → 400 invalid_parameter saying %s was repeated', async (url, parameter, op) => {
    const response = await expectInvalid(url, parameter, op);
    expect(response.json().errors).toEqual([{ parameter, detail: REPEATED }]);
    expect(response.json().detail).toBe(`Parameter ${parameter}: ${REPEATED}`);
  });

  test('given three times: the count says so', async () => {
    const response = await expectInvalid('/v1/sites?limit=1&limit=2&limit=3', 'limit');
    expect(response.json().errors[0].detail).toBe('given 3 times; give it once');
  });

  test('a repeated cursor is still invalid_cursor, saying it was repeated', async () => {
    const first = (await get('/v1/sites?limit=1')).json();
    const cursor = cursorOf(first.links.next);
    const response = await expectInvalid(
      `/v1/sites?cursor=${cursor}&cursor=${cursor}`,
      'cursor',
      'listSites',
      'invalid_cursor',
    );
    expect(response.json().errors).toEqual([{ parameter: 'cursor', detail: REPEATED }]);
  });

  test('an unknown parameter repeated is still unknown', async () => {
    const response = await expectInvalid('/v1/sites?colour=red&colour=blue', 'colour');
    expect(response.json().errors).toEqual([{ parameter: 'colour', detail: 'unknown query parameter' }]);
  });

  test('each given once is served', async () => {
    // From the start of the feed the first page has more, so `wait` does not hold it.
    const changes = await get('/v1/changes?limit=1&wait=1&filter[type]=sites');
    expectConforms(changes, 'listChanges');
    expect(new URL(changes.json().links.next).searchParams.getAll('wait')).toEqual(['1']);
    const sites = await get('/v1/sites?limit=1&sort=name&filter[updated_since]=2000-01-01T00:00:00Z');
    expectConforms(sites, 'listSites');
    expect(sites.json().data).toHaveLength(1);
  });
});

describe('sort', () => {
  test('id ascending by default; -field descending with id as the tie-breaker', async () => {
    expect(ids((await get('/v1/sites')).json())).toEqual(api.f.ids.A.sites);
    expect(ids((await get('/v1/sites?sort=-name')).json())).toEqual([...api.f.ids.A.sites].reverse());
    expect(ids((await get('/v1/sites?sort=-id')).json())).toEqual([...api.f.ids.A.sites].reverse());
    // Equal created_at everywhere: the order is the tie-breaker's, in the last field's direction.
    expect(ids((await get('/v1/sites?sort=-created_at')).json())).toEqual([...api.f.ids.A.sites].reverse());
    expect(ids((await get('/v1/sites?sort=updated_at,name')).json())).toEqual(api.f.ids.A.sites);
  });

  test.each([
    'area',
    'password',
    '-',
    'name,',
    ',name',
    'name;DROP TABLE sites',
    '_changed_us',
    'NAME',
    'name desc',
  ])('sort=%j → 400 invalid_parameter naming sort', async (sort) => {
    await expectInvalid(`/v1/sites?sort=${encodeURIComponent(sort)}`, 'sort');
  });

  // A field named twice is redundant or contradicts itself: refused rather than half-honoured.
  test.each(['name,name', 'name,-name', '-updated_at,name,updated_at', 'id,id', 'name,id,name'])(
    'sort=%j (a field named twice) → 400 invalid_parameter naming sort',
    async (sort) => {
      const response = await expectInvalid(`/v1/sites?sort=${encodeURIComponent(sort)}`, 'sort');
      expect(response.json().errors[0].detail).toMatch(/named more than once/);
    },
  );

  test('fields after id are still ignored', async () => {
    expect(ids((await get('/v1/sites?sort=-id,name')).json())).toEqual([...api.f.ids.A.sites].reverse());
  });
});

describe('include', () => {
  test('at most 5 relations', async () => {
    expect((await get('/v1/sites?include=contacts,contacts,contacts,contacts,contacts')).statusCode).toBe(
      200,
    );
    await expectInvalid('/v1/sites?include=contacts,contacts,contacts,contacts,contacts,contacts', 'include');
  });

  test.each([
    ['/v1/sites?include=category', 'include', 'listSites'],
    ['/v1/sites?include=owner', 'include', 'listSites'],
    ['/v1/equipment?include=contacts', 'include', 'listEquipment'],
    ['/v1/services?include=category', 'include', 'listServices'],
    ['/v1/consumables?include=x', 'include', 'listConsumables'],
  ])('%s → 400 naming %s', async (url, parameter, op) => {
    await expectInvalid(url, parameter, op);
  });
});

describe('fields', () => {
  test.each([
    ['/v1/sites?fields[sites]=name,password', 'fields[sites]', 'listSites'],
    ['/v1/sites?fields[sites]=', 'fields[sites]', 'listSites'],
    ['/v1/sites?fields[services]=name', 'fields[services]', 'listSites'],
    ['/v1/services?fields[services]=rate', 'fields[services]', 'listServices'],
    ['/v1/equipment/x1?fields[equipment]=owner', 'fields[equipment]', 'getEquipment'],
  ])('%s → 400 naming %s', async (url, parameter, op) => {
    await expectInvalid(url, parameter, op);
  });

  test('bracketed names may be percent-encoded or literal', async () => {
    const literal = await get('/v1/sites?fields[sites]=name');
    const encoded = await get('/v1/sites?fields%5Bsites%5D=name');
    const lower = await get('/v1/sites?fields%5bsites%5d=name');
    expect(encoded.json().data).toEqual(literal.json().data);
    expect(lower.json().data).toEqual(literal.json().data);
    const filtered = await get('/v1/sites?filter%5Bupdated_since%5D=2000-01-01T00:00:00Z');
    expect(ids(filtered.json())).toEqual(api.f.ids.A.sites);
  });
});

describe('filter[updated_since]', () => {
  test.each([
    'yesterday',
    '2026-01-31',
    '2026-01-31T12:00:00',
    '2026-02-30T00:00:00Z',
    '2026-01-01T23:59:60Z',
    "1' OR '1'='1",
  ])('%j → 400 naming filter[updated_since]', async (value) => {
    await expectInvalid(
      `/v1/sites?filter[updated_since]=${encodeURIComponent(value)}`,
      'filter[updated_since]',
    );
  });

  test('accepts offsets and fractions', async () => {
    expect((await get('/v1/sites?filter[updated_since]=2000-01-01T01:00:00.123%2B01:00')).statusCode).toBe(
      200,
    );
  });

  test('a time in the future (beyond the overlap) returns nothing', async () => {
    const response = await get('/v1/sites?filter[updated_since]=2999-01-01T00:00:00Z');
    expect(response.json().data).toEqual([]);
    expect(response.json().links.next).toBeNull();
  });
});

describe('cursor', () => {
  async function nextCursor(url: string, key = api.f.keys.a): Promise<string> {
    const response = await get(url, key);
    return cursorOf(response.json().links.next);
  }

  test('tampered, truncated, re-signed or random cursors → 400 invalid_cursor', async () => {
    const cursor = await nextCursor('/v1/sites?limit=1');
    const [payload, signature] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const changed = Buffer.from(JSON.stringify({ ...decoded, k: ['zzzz'] })).toString('base64url');
    const forged = signCursor('a-guessed-secret-a-guessed-secret!!', decoded, {
      direction: 'after',
      position: ['x'],
    });
    for (const bad of [
      `${changed}.${signature}`,
      `${payload}.${signature.slice(0, -2)}`,
      `${payload.slice(1)}.${signature}`,
      forged,
      'abc.def',
      `${payload}.`.concat('A'.repeat(43)),
    ]) {
      await expectInvalid(
        `/v1/sites?limit=1&cursor=${encodeURIComponent(bad)}`,
        'cursor',
        'listSites',
        'invalid_cursor',
      );
    }
  });

  test('a cursor only works with the sort, filters, resource and company it was issued for', async () => {
    const cursor = await nextCursor('/v1/sites?limit=1');
    await expectInvalid(
      `/v1/sites?limit=1&sort=name&cursor=${cursor}`,
      'cursor',
      'listSites',
      'invalid_cursor',
    );
    await expectInvalid(
      `/v1/sites?limit=1&filter[updated_since]=2000-01-01T00:00:00Z&cursor=${cursor}`,
      'cursor',
      'listSites',
      'invalid_cursor',
    );
    await expectInvalid(`/v1/services?limit=1&cursor=${cursor}`, 'cursor', 'listServices', 'invalid_cursor');
    const other = await api.app.inject({
      url: `/v1/sites?limit=1&cursor=${cursor}`,
      headers: bearer(api.f.keys.b),
    });
    expectProblem(other, 'listSites', 400, 'invalid_cursor');
    const multiOnB = await api.app.inject({
      url: `/v1/sites?limit=1&cursor=${cursor}`,
      headers: { ...bearer(api.f.keys.multi), 'x-service-company': COMPANY.B },
    });
    expectProblem(multiOnB, 'listSites', 400, 'invalid_cursor');
  });

  test('equivalent sorts share cursors; limit, include and fields may change between pages', async () => {
    const cursor = await nextCursor('/v1/sites?limit=1&sort=name');
    const response = await get(
      `/v1/sites?limit=2&sort=name,id&include=contacts&fields[sites]=name&cursor=${cursor}`,
    );
    expect(response.statusCode).toBe(200);
    expect(ids(response.json())).toEqual(api.f.ids.A.sites.slice(1, 3));
    expect(Object.keys(response.json().data[0])).toEqual(['id', 'name', 'contacts']);
  });

  // The contract's pattern and length bounds are Ajv's to check, but a cursor the api cannot use is
  // invalid_cursor whatever the reason, never invalid_parameter (a client then restarts its walk).
  test.each([
    ['without a dot', 'abcdef'],
    ['with characters outside base64url', 'ab+c.de/f'],
    ['empty', ''],
    ['longer than 4096 characters', `${'a'.repeat(5000)}.b`],
    ['not valid percent-encoded UTF-8', '%FF.%FE'],
  ])('a cursor %s → 400 invalid_cursor naming cursor', async (_name, cursor) => {
    const response = await expectInvalid(
      `/v1/sites?cursor=${cursor}`,
      'cursor',
      'listSites',
      'invalid_cursor',
    );
    expect(response.json().errors).toHaveLength(1);
  });

  test('a repeated cursor → 400 invalid_cursor; another bad parameter with it → invalid_parameter', async () => {
    const cursor = await nextCursor('/v1/sites?limit=1');
    await expectInvalid(
      `/v1/sites?cursor=${cursor}&cursor=${cursor}`,
      'cursor',
      'listSites',
      'invalid_cursor',
    );
    await expectInvalid(`/v1/sites?limit=x&cursor=${cursor}`, 'limit');
  });

  test('a cursor signed for another sort length is refused even with a valid signature', async () => {
    const cursor = signCursor(
      TEST_CURSOR_SECRET,
      { c: COMPANY.A, r: 'sites', s: 'id', f: '' },
      { direction: 'after', position: ['a', 'b'] },
    );
    await expectInvalid(`/v1/sites?cursor=${cursor}`, 'cursor', 'listSites', 'invalid_cursor');
  });
});

describe('hostile input never gives a 500', () => {
  const cases: [string, string, string][] = [
    ['/v1/sites?%FF=1', '%FF', 'listSites'],
    ['/v1/sites?sort=%FF%FE', 'sort', 'listSites'],
    ['/v1/sites?fields%5Bsites%5D=%C3%28', 'fields[sites]', 'listSites'],
    ['/v1/sites?__proto__=1', '__proto__', 'listSites'],
    ['/v1/sites?constructor[prototype]=1', 'constructor[prototype]', 'listSites'],
    ['/v1/sites?filter[name]=x', 'filter[name]', 'listSites'],
    [
      '/v1/sites?filter[updated_since]=1%27%3B%20DROP%20TABLE%20sites%3B--',
      'filter[updated_since]',
      'listSites',
    ],
    [`/v1/sites?sort=${'name,'.repeat(2000)}id`, 'sort', 'listSites'],
    [`/v1/sites?fields[sites]=${'name,'.repeat(500)}id`, 'fields[sites]', 'listSites'],
    ["/v1/sites/1'%20OR%20'1'='1", 'siteId', 'getSite'],
    ['/v1/sites/%3Cscript%3E', 'siteId', 'getSite'],
    ['/v1/services?limit=-99999999999999999999', 'limit', 'listServices'],
    ['/v1/reference/scopes?limit=1', 'limit', 'listScopes'],
    ['/v1/me?include=company', 'include', 'getMe'],
  ];
  test.each(cases)('%s → 400 naming %s', async (url, parameter, op) => {
    await expectInvalid(url, parameter, op);
  });

  test('a path with broken percent-encoding → 400 bad_request', async () => {
    const response = await get('/v1/sites/%E0%A4%A');
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('bad_request');
    expect(response.headers['ratelimit-limit']).toBeDefined();
  });

  test('a body on a GET is ignored or refused, never a 500', async () => {
    for (const type of ['application/json', 'text/plain', 'application/x-evil']) {
      const response = await api.app.inject({
        method: 'GET',
        url: '/v1/sites',
        headers: { ...bearer(api.f.keys.a), 'content-type': type },
        payload: '{"x":',
      });
      expect(response.statusCode).toBeLessThan(500);
    }
  });

  test('an unknown path → 404 not_found; a wrong method on a known path → 405 with Allow', async () => {
    const missing = await get('/v1/parties');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const response = await api.app.inject({
        method,
        url: `/v1/sites/${api.f.ids.A.sites[0]}`,
        headers: bearer(api.f.keys.a),
      });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().code).toBe('method_not_allowed');
    }
  });
});
