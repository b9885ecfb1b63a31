// The deletions feed (docs/public-data-api-v1.md, "Deletions") through the real pipeline:
// PostgreSQL → Debezium → Kafka → ingest → SQLite → api.
//
// A partner of company X records the start of its run, then records are deleted in PostgreSQL, one
// moves to company Y, a contact goes: GET /v1/deletions?filter[deleted_since]=<that start> lists
// exactly the deleted and the moved records for X (not the contact: its site comes again through
// filter[updated_since]); Y gets the moved record as new. Read scopes per type, cursor paging, and
// the retention window: ingest restarted with a 2 s window prunes the tombstones and the same
// request answers 410 sync_window_expired. The api's overlap is 1 s here (60 s in production).
import { randomUUID } from 'node:crypto';
import { openCompanyReader } from '@pda/projections/read';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';

const OVERLAP_MS = 1_000;

interface Deletion {
  type: string;
  id: string;
  deleted_at: string;
}
interface Page {
  data: Deletion[];
  meta: { page: { limit: number; has_more: boolean } };
  links: { self: string; next: string | null; prev: string | null };
}

let pool: pg.Pool;
let readSide: ReadSide;
const X = randomUUID();
const Y = randomUUID();
const keys = { x: '', xSitesOnly: '', y: '' };
let sites: string[] = []; // X's sites, by name order
let services: string[] = [];
let contactSite = '';

const issue = (companyId: string, scopes: string[]) => issueKey(pool, companyId, scopes, 'deletions e2e');

async function get<T = Page>(url: string, key: string): Promise<{ status: number; body: T }> {
  const response = await readSide.app.inject({
    method: 'GET',
    url: url.replace(readSide.baseUrl, ''),
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: response.statusCode, body: response.json() as T };
}

const deletionsSince = (ms: number, extra = '') =>
  `/v1/deletions?filter[deleted_since]=${new Date(ms).toISOString()}${extra}`;
const entries = (page: Page) => page.data.map((row) => `${row.type}/${row.id}`).sort();

beforeAll(async () => {
  pool = pgPool();
  await pool.query(
    "INSERT INTO companies (id, name, currency) VALUES ($1, 'Deletions Loser', 'USD'), ($2, 'Deletions Gainer', 'USD')",
    [X, Y],
  );
  sites = (
    await pool.query<{ id: string }>(
      `INSERT INTO sites (company_id, name) SELECT $1, 'Site ' || g FROM generate_series(1, 6) g RETURNING id`,
      [X],
    )
  ).rows.map((row) => row.id);
  await pool.query("INSERT INTO sites (company_id, name) VALUES ($1, 'Y site')", [Y]);
  services = (
    await pool.query<{ id: string }>(
      `INSERT INTO services (company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
         subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
       SELECT $1, 'Service ' || g, 'hourly', 80, 'USD', 'hourly', 50, 'USD' FROM generate_series(1, 3) g RETURNING id`,
      [X],
    )
  ).rows.map((row) => row.id);
  contactSite = sites[2]!;
  await pool.query(
    "INSERT INTO site_contacts (company_id, site_id, name, email) VALUES ($1, $2, 'Contact', 'c@example.com')",
    [X, contactSite],
  );
  keys.x = await issue(X, ['sites:read', 'services:read']);
  keys.xSitesOnly = await issue(X, ['sites:read']);
  keys.y = await issue(Y, ['sites:read']);

  readSide = await startReadSide({
    name: 'deletions',
    api: { API_UPDATED_SINCE_OVERLAP_MS: String(OVERLAP_MS) },
  });
  await waitFor(
    "company X's sites, services and contact to be projected",
    async () => {
      const siteList = await get<{ data: { id: string; contacts: unknown[] }[] }>(
        '/v1/sites?limit=200&include=contacts',
        keys.x,
      );
      const serviceList = await get<{ data: unknown[] }>('/v1/services?limit=200', keys.x);
      return (
        siteList.status === 200 &&
        siteList.body.data.length === 6 &&
        siteList.body.data.some((site) => site.contacts.length === 1) &&
        serviceList.body.data?.length === 3
      );
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
}, 240_000);

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

describe('GET /v1/deletions through the real pipeline', () => {
  let runStart = 0;

  it('a partner run before any delete sees none', async () => {
    // The company file vouches for its deletions from its creation on: start past it by the overlap.
    await new Promise((resolve) => setTimeout(resolve, OVERLAP_MS + 200));
    runStart = Date.now();
    const { status, body } = await get(deletionsSince(runStart), keys.x);
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
  });

  it('PostgreSQL deletes and a move to another company are listed for the company that lost them', async () => {
    await pool.query('DELETE FROM sites WHERE id = ANY($1)', [[sites[0], sites[1]]]);
    await pool.query('DELETE FROM services WHERE id = $1', [services[0]]);
    await pool.query('DELETE FROM site_contacts WHERE site_id = $1', [contactSite]);
    await pool.query('UPDATE sites SET company_id = $1 WHERE id = $2', [Y, sites[3]]);
    const expected = [
      `services/${services[0]}`,
      `sites/${sites[0]}`,
      `sites/${sites[1]}`,
      `sites/${sites[3]}`,
    ].sort();
    const page = await waitFor(
      'the deletes to reach /v1/deletions',
      async () => {
        const { status, body } = await get(deletionsSince(runStart), keys.x);
        return status === 200 && entries(body).length >= expected.length ? body : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    expect(entries(page)).toEqual(expected); // no contact: not an exported resource
    for (const row of page.data) {
      expect(row.deleted_at >= new Date(runStart - OVERLAP_MS).toISOString()).toBe(true);
    }
    const times = page.data.map((row) => row.deleted_at);
    expect(times).toEqual([...times].sort());
  });

  it('the company that gained the record gets it as new; the deleted contact brings its site again', async () => {
    const gained = await get<{ data: { id: string }[] }>(
      `/v1/sites?filter[updated_since]=${new Date(runStart).toISOString()}`,
      keys.y,
    );
    expect(gained.body.data.map((site) => site.id)).toEqual([sites[3]]);
    const changed = await get<{ data: { id: string; contacts: unknown[] }[] }>(
      `/v1/sites?include=contacts&filter[updated_since]=${new Date(runStart).toISOString()}`,
      keys.x,
    );
    expect(changed.body.data).toEqual([expect.objectContaining({ id: contactSite, contacts: [] })]);
  });

  it('each type needs its read scope', async () => {
    const refused = await readSide.app.inject({
      url: deletionsSince(runStart, '&filter[type]=services'),
      headers: { authorization: `Bearer ${keys.xSitesOnly}` },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'insufficient_scope' });
    expect(refused.json().detail).toContain('services:read');
    expect(refused.headers['ratelimit-remaining']).toBeDefined();
    const sitesOnly = await get(deletionsSince(runStart), keys.xSitesOnly);
    expect(entries(sitesOnly.body)).toEqual(
      [`sites/${sites[0]}`, `sites/${sites[1]}`, `sites/${sites[3]}`].sort(),
    );
  });

  it('cursor paging: links.next walks every deletion once, links.prev goes back', async () => {
    const all = (await get(deletionsSince(runStart), keys.x)).body.data;
    const walked: Deletion[] = [];
    const pages: Page[] = [];
    let url: string | null = deletionsSince(runStart, '&limit=1');
    while (url) {
      const { status, body }: { status: number; body: Page } = await get(url, keys.x);
      expect(status).toBe(200);
      pages.push(body);
      walked.push(...body.data);
      url = body.links.next;
    }
    expect(walked).toEqual(all);
    expect(pages).toHaveLength(all.length);
    const back = await get(pages[2]!.links.prev!, keys.x);
    expect(back.body.data).toEqual([all[1]]);
  });

  it('past the retention window (ingest restarted with a 2 s window) the same request answers 410', async () => {
    await readSide.restartIngest({
      INGEST_TOMBSTONE_RETENTION_S: '2',
      INGEST_TOMBSTONE_PRUNE_INTERVAL_S: '1',
    });
    const expired = await waitFor(
      'ingest to prune the tombstones',
      async () => {
        const response = await readSide.app.inject({
          url: deletionsSince(runStart),
          headers: { authorization: `Bearer ${keys.x}` },
        });
        return response.statusCode === 410 ? response : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(expired.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(expired.json()).toMatchObject({ status: 410, code: 'sync_window_expired' });
    expect(expired.json().detail).toMatch(/full export/);
    // Pruned, not only refused: X's file keeps no tombstone older than the window.
    const db = openCompanyReader(readSide.dataDir, X);
    try {
      expect(db.prepare('SELECT count(*) FROM tombstones').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    // Within the window the feed still answers.
    const recent = await get(deletionsSince(Date.now()), keys.x);
    expect(recent.status).toBe(200);
  });
});
