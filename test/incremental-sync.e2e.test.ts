// The incremental-sync guarantee (docs/architecture.md#change-time-and-updated_since), proven
// against the real pipeline:
// PostgreSQL → Debezium → Kafka → ingest → SQLite → api.
//
// A partner follows the documented procedure over and over while a writer keeps changing the
// company's sites and contacts (updates, inserts, contact changes, transactions that commit late):
// each run records its start time, walks `links.next` to the end with
// `filter[updated_since]=<start of the previous run>` and `include=contacts`, and merges what it
// sees. After the writes stop and the pipeline has caught up, one last run must leave the partner
// with exactly what PostgreSQL holds: every site, every name, every contact. Duplicates are allowed,
// misses are not.
//
// The api's safety overlap is set to 1 s here (60 s in production): runs are ~1 s apart and the
// whole test lasts much longer than the overlap, so a change missed by one run would stay missed.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';

const WRITE_PHASE_MS = 15_000;
const OVERLAP_MS = 1_000;

interface PartnerSite {
  name: string;
  updated_at: string;
  contacts: string[]; // "id=email", sorted
}

interface SiteBody {
  id: string;
  name: string;
  updated_at: string;
  contacts?: { id: string; email: string }[];
}

let pool: pg.Pool;
let readSide: ReadSide;
let companyId: string;
let apiKey: string;

beforeAll(async () => {
  pool = pgPool();
  companyId = randomUUID();
  await pool.query(
    "INSERT INTO companies (id, name, currency) VALUES ($1, 'Sync Guarantee Landscaping', 'USD')",
    [companyId],
  );
  await pool.query(
    `INSERT INTO sites (company_id, name) SELECT $1, 'Site ' || g FROM generate_series(1, 150) g`,
    [companyId],
  );
  await pool.query(
    `INSERT INTO site_contacts (company_id, site_id, name, email)
     SELECT company_id, id, 'Contact', 'v0@example.com' FROM sites WHERE company_id = $1`,
    [companyId],
  );
  apiKey = await issueKey(pool, companyId, ['sites:read'], 'sync e2e');
  readSide = await startReadSide({
    name: 'sync',
    api: { API_UPDATED_SINCE_OVERLAP_MS: String(OVERLAP_MS) },
  });
  await waitFor('the key and the sites to be projected', async () => (await siteCountInApi()) === 150, {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
});

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

async function get(
  url: string,
): Promise<{ status: number; body: { data: SiteBody[]; links: { next: string | null } } }> {
  const path = url.replace(readSide.baseUrl, '');
  const response = await readSide.app.inject({
    method: 'GET',
    url: path,
    headers: { authorization: `Bearer ${apiKey}` },
  });
  return { status: response.statusCode, body: response.json() };
}

async function siteCountInApi(): Promise<number | undefined> {
  let count = 0;
  let url: string | null = '/v1/sites?limit=200';
  while (url) {
    const { status, body } = await get(url);
    if (status !== 200) return undefined;
    count += body.data.length;
    url = body.links.next;
  }
  return count;
}

/** One run of the documented procedure; returns the number of records seen. */
async function partnerRun(
  local: Map<string, PartnerSite>,
  updatedSince: string | undefined,
): Promise<number> {
  const filter = updatedSince ? `&filter%5Bupdated_since%5D=${encodeURIComponent(updatedSince)}` : '';
  let url: string | null = `/v1/sites?limit=37&include=contacts${filter}`;
  let seen = 0;
  while (url) {
    const { status, body } = await get(url);
    expect(status).toBe(200);
    for (const site of body.data) {
      local.set(site.id, {
        name: site.name,
        updated_at: site.updated_at,
        contacts: (site.contacts ?? []).map((c) => `${c.id}=${c.email}`).sort(),
      });
    }
    seen += body.data.length;
    url = body.links.next;
  }
  return seen;
}

/** Random writes for `ms`: renames, inserts, contact changes and late-committing transactions. */
async function writeConcurrently(ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  let writes = 0;
  const lateCommit = async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `UPDATE sites SET name = 'late ' || $2 WHERE id = (SELECT id FROM sites WHERE company_id = $1 ORDER BY random() LIMIT 1)`,
        [companyId, writes],
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // other writers commit meanwhile
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  const pending: Promise<void>[] = [];
  while (Date.now() < deadline) {
    writes += 1;
    const choice = writes % 10;
    if (choice === 0) pending.push(lateCommit());
    else if (choice < 5) {
      await pool.query(
        `UPDATE sites SET name = 'renamed ' || $2 WHERE id = (SELECT id FROM sites WHERE company_id = $1 ORDER BY random() LIMIT 1)`,
        [companyId, writes],
      );
    } else if (choice < 7) {
      await pool.query(
        `WITH s AS (INSERT INTO sites (company_id, name) VALUES ($1, 'new ' || $2) RETURNING id, company_id)
         INSERT INTO site_contacts (company_id, site_id, name, email) SELECT company_id, id, 'Contact', 'new@example.com' FROM s`,
        [companyId, writes],
      );
    } else {
      // Only the contact changes: its site must still be exported again (include=contacts).
      await pool.query(
        `UPDATE site_contacts SET email = 'v' || $2 || '@example.com'
         WHERE id = (SELECT id FROM site_contacts WHERE company_id = $1 ORDER BY random() LIMIT 1)`,
        [companyId, writes],
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await Promise.all(pending);
  return writes;
}

async function postgresState(): Promise<Map<string, PartnerSite>> {
  const { rows } = await pool.query<{
    id: string;
    name: string;
    updated_at: string;
    contacts: string[] | null;
  }>(
    `SELECT s.id, s.name,
            to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS updated_at,
            array_agg(c.id || '=' || c.email ORDER BY c.id || '=' || c.email) FILTER (WHERE c.id IS NOT NULL) AS contacts
     FROM sites s LEFT JOIN site_contacts c ON c.site_id = s.id
     WHERE s.company_id = $1 GROUP BY s.id`,
    [companyId],
  );
  return new Map(
    rows.map((r) => [r.id, { name: r.name, updated_at: r.updated_at, contacts: (r.contacts ?? []).sort() }]),
  );
}

describe('incremental sync through the real pipeline', () => {
  it('a partner following the documented procedure misses no change made during its walks', async () => {
    const local = new Map<string, PartnerSite>();
    let previousStart: string | undefined;
    let runs = 0;
    let recordsSeen = 0;

    const writer = writeConcurrently(WRITE_PHASE_MS);
    let writing = true;
    void writer.finally(() => {
      writing = false;
    });
    while (writing) {
      const start = new Date().toISOString();
      recordsSeen += await partnerRun(local, previousStart);
      previousStart = start;
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const writes = await writer;

    // Let the pipeline catch up, then one last run of the same procedure.
    const expected = await postgresState();
    // (A full, unfiltered walk into a scratch map: the partner's own map is not touched by it.)
    await waitFor(
      'the pipeline to catch up',
      async () => {
        const everything = new Map<string, PartnerSite>();
        await partnerRun(everything, undefined);
        return isDeepStrictEqual(everything, expected);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    recordsSeen += await partnerRun(local, previousStart);

    expect(runs).toBeGreaterThan(5);
    expect(writes).toBeGreaterThan(100);
    // The walks were incremental, not full re-reads every time.
    expect(recordsSeen).toBeLessThan(runs * expected.size);
    expect(local.size).toBe(expected.size);
    for (const [id, site] of expected) {
      expect(local.get(id), `site ${id}`).toEqual(site);
    }
  });
});
