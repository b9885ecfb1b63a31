import { COMPANY, createFixture, type Fixture, uuid } from '@pda/api/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createClient, SyncWindowExpiredError } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';

// The client against the real api over HTTP (an in-process app on a loopback port, on projection
// files built through the ingest path): typed reads, paging along links.next, and error answers
// as ApiError with the problem document (docs/partners.md).

let f: Fixture;
let api: RunningApi;
const requests: string[] = [];
// The global fetch, counting requests (not a mock: every request goes over HTTP).
const countingFetch: typeof fetch = (input, init) => {
  requests.push(String(input));
  return fetch(input, init);
};

beforeAll(async () => {
  f = createFixture();
  api = await startApi(f.dataDir);
});
afterAll(async () => {
  await api.close();
  f.cleanup();
});

const client = (key: string = f.keys.a, extra: { company?: string } = {}) =>
  createClient({ baseUrl: api.baseUrl, apiKey: key, fetch: countingFetch, ...extra });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('reads', () => {
  test('me(): the key (with revokes_at) and the selected company', async () => {
    const me = await client().me();
    expect(me.data.company).toEqual({ id: COMPANY.A, name: 'Company A', currency: 'CAD' });
    expect(me.data.api_key.revokes_at).toBeNull();
    expect(me.data.api_key.identifier).toMatch(/^svc_pk_….{4}$/);
    const rotating = await client(f.keys.rotating).me();
    expect(rotating.data.api_key.revokes_at).toMatch(/^2999-01-01T00:00:00/);
  });

  test('list() sends the typed query; next() follows links.next as given until it is null', async () => {
    requests.length = 0;
    const c = client();
    const first = await c.list('sites', { limit: 2, include: 'contacts', 'fields[sites]': 'name' });
    expect(first.data.map((site) => site.id)).toEqual(f.ids.A.sites.slice(0, 2));
    expect(first.data[0]).toEqual({ id: f.ids.A.sites[0], name: 'A site 1', contacts: expect.any(Array) });
    expect(first.meta.page).toEqual({ limit: 2, has_more: true });
    const second = await c.next(first);
    expect(second?.data.map((site) => site.id)).toEqual(f.ids.A.sites.slice(2));
    expect(second?.links.next).toBeNull();
    expect(second && (await c.next(second))).toBeNull();
    expect(requests).toHaveLength(2);
    expect(requests[0]).toBe(`${api.baseUrl}/v1/sites?limit=2&include=contacts&fields%5Bsites%5D=name`);
    expect(requests[1]).toBe(first.links.next);
  });

  test('get(): one record, with include', async () => {
    const equipment = await client().get('equipment', f.ids.A.equipment[0]!, { include: 'category' });
    expect(equipment.data.category?.id).toBe(f.ids.A.categories[0]);
  });

  test('exportAll(): every record, across pages (cursor paging along links.next)', async () => {
    requests.length = 0;
    const ids: string[] = [];
    for await (const equipment of client().exportAll('equipment', { query: { limit: 1 } })) {
      ids.push(equipment.id);
    }
    expect(ids).toEqual(f.ids.A.equipment);
    expect(requests).toHaveLength(3);
    expect(requests.slice(1).every((url) => url.includes('cursor='))).toBe(true);
  });

  test('a multi-company key acts for the company named by `company` (X-Service-Company)', async () => {
    const me = await client(f.keys.multi, { company: COMPANY.B }).me();
    expect(me.data.company.id).toBe(COMPANY.B);
    const error = await rejection(client(f.keys.multi).me());
    expect(error).toMatchObject({ status: 400, code: 'company_selection_required' });
  });
});

describe('error answers: ApiError with the problem document, never retried', () => {
  test('404 not_found carries code, status, detail and request_id', async () => {
    requests.length = 0;
    const error = await rejection(client().get('sites', uuid(0x99, 1)));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(SyncWindowExpiredError);
    const apiError = error as ApiError;
    expect(apiError).toMatchObject({ name: 'ApiError', status: 404, code: 'not_found' });
    expect(apiError.detail).toEqual(expect.any(String));
    expect(apiError.requestId).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(apiError.problem?.request_id).toBe(apiError.requestId);
    expect(apiError.message).toContain(`(request ${apiError.requestId})`);
    expect(requests).toHaveLength(1);
  });

  test('401 unauthenticated, 403 insufficient_scope, 400 invalid_parameter', async () => {
    expect(await rejection(client('svc_pk_unknown').me())).toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
    expect(await rejection(client(f.keys.noScopes).list('sites'))).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
    expect(await rejection(client().list('sites', { sort: 'name,name' }))).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });

  test('a link that leaves the base URL is refused: the key is never sent elsewhere', async () => {
    const elsewhere = await startApi(f.dataDir, { publicBaseUrl: 'https://elsewhere.example' });
    try {
      const c = createClient({ baseUrl: elsewhere.baseUrl, apiKey: f.keys.a });
      const first = await c.list('sites', { limit: 1 });
      expect(first.links.next).toMatch(/^https:\/\/elsewhere\.example\//);
      await expect(c.next(first)).rejects.toThrow(
        /refusing to send the API key to https:\/\/elsewhere\.example/,
      );
    } finally {
      await elsewhere.close();
    }
  });
});
