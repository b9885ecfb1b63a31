// The incremental-sync guarantee (docs/partners.md), proven through @pda/client against the real
// pipeline: PostgreSQL → Debezium → Kafka → ingest → SQLite → api (over HTTP).
//
// Six partners keep a copy of one company. Three use sync tokens (`syncFrom`, TokenPartner in
// test/src/sync-partner.ts), their clocks exact, 5 minutes fast and 5 minutes slow — beyond any
// overlap, and read by nothing in the procedure. Three use times (`syncSince`, SyncPartner),
// passing the start time of their last successful run from their own clock: exact, 2 s fast and
// 2 s slow. Each does a full export, then a run about every second, while a writer makes random
// changes to every exported table (test/src/random-writer.ts): inserts, updates of every kind of
// column, deletes, contacts and categories changed, sites moved to another company and back,
// transactions that commit seconds late. Half-way, the company's file is rebuilt from the topics
// (a new generation): every partner must get 410, export again and go on. Once the writer stops
// and the pipeline has drained, one last run must leave each partner with exactly what PostgreSQL
// holds, rendered as the api presents it (test/src/documents-from-postgres.ts): every live record
// with every field and relation, no deleted record. Duplicates are allowed and counted; misses must
// be 0. Then the token partners poll: a run with nothing changed receives nothing, and once its
// first pages are known, every request of a run is a 304 that leaves RateLimit-Remaining as it was.
//
// The api's overlap is 3 s here (60 s in production): more than the time partners' 2 s skew plus
// the 1 s margin test/incremental-sync.e2e.test.ts proves, and much less than the test lasts, so a
// change missed by a run would stay missed.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ApiError, type Client, createClient } from '@pda/client';
import { SCOPE_NAMES } from '@pda/operator-tools/scopes';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCompany, type WriterSummary, writeRandomly } from './src/random-writer.ts';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';
import {
  type Copy,
  copyFromPostgres,
  differences,
  fullCopy,
  SYNCED,
  SyncPartner,
  TokenPartner,
} from './src/sync-partner.ts';

const WRITE_PHASE_MS = 20_000;
const OVERLAP_MS = 3_000;
const CLOCKS = [
  { name: 'exact', offsetMs: 0 },
  { name: '2 s fast', offsetMs: 2_000 },
  { name: '2 s slow', offsetMs: -2_000 },
] as const;
const TOKEN_CLOCKS = [
  { name: 'exact', offsetMs: 0 },
  { name: '5 min fast', offsetMs: 300_000 },
  { name: '5 min slow', offsetMs: -300_000 },
] as const;

let pool: pg.Pool;
let readSide: ReadSide;
const company = randomUUID();
const otherCompany = randomUUID();
let apiKey: string;

const client = (fetch?: typeof globalThis.fetch): Client =>
  createClient({ baseUrl: readSide.baseUrl, apiKey, ...(fetch ? { fetch } : {}) });

beforeAll(async () => {
  // Late transactions hold a connection each for seconds while the writer goes on.
  pool = pgPool(undefined, 12);
  await pool.query(
    "INSERT INTO companies (id, name, currency) VALUES ($1, 'Partner Sync Snow', 'USD'), ($2, 'Partner Sync Other', 'USD')",
    [company, otherCompany],
  );
  await seedCompany(pool, company, 40);
  apiKey = await issueKey(pool, company, [...SCOPE_NAMES], 'partner sync e2e');
  readSide = await startReadSide({
    name: 'partner-sync',
    listen: true,
    api: { API_UPDATED_SINCE_OVERLAP_MS: String(OVERLAP_MS) },
  });
  const seeded = await copyFromPostgres(pool, company);
  await waitFor('the seed to be projected', async () => isDeepStrictEqual(await fullCopy(client()), seeded), {
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  // The company file vouches for its deletions from its creation on: the slow partner's first
  // `since`, minus the overlap, must not reach before it (that would be a 410 and a second full
  // export, which is right but not what is tested here).
  await new Promise((resolve) => setTimeout(resolve, OVERLAP_MS + 2_500));
}, 240_000);

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

/** One run; a 503 (the company out of service while its file is rebuilt) after the client's retries is waited out. */
async function runOrWait(run: () => Promise<void>, unavailable: { count: number }): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 503) throw error;
    unavailable.count += 1;
  }
}

describe('partners syncing with @pda/client through the real pipeline', () => {
  const partners = CLOCKS.map((clock) => ({ ...clock, partner: undefined as unknown as SyncPartner }));
  const tokenPartners = TOKEN_CLOCKS.map((clock) => ({
    ...clock,
    partner: undefined as unknown as TokenPartner,
  }));
  const unavailable = { count: 0 };
  let expected: Copy;
  let writer: WriterSummary;
  let rebuildSeconds = 0;
  const quietRuns: { items: number; statuses: number[] }[][] = [];

  beforeAll(async () => {
    for (const entry of partners) entry.partner = new SyncPartner(client(), entry.offsetMs);
    for (const entry of tokenPartners) entry.partner = new TokenPartner(client, entry.offsetMs);
    let writing = true;
    const writes = writeRandomly(pool, { company, other: otherCompany }, { ms: WRITE_PHASE_MS }).finally(
      () => {
        writing = false;
      },
    );
    const loops = [...partners, ...tokenPartners].map(async ({ partner }) => {
      while (writing) {
        await runOrWait(() => partner.run(), unavailable);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    });
    // Half-way: the company's file is rebuilt from the topics under the writer and the partners.
    await new Promise((resolve) => setTimeout(resolve, WRITE_PHASE_MS / 2));
    const rebuildStarted = Date.now();
    await readSide.rebuildCompany(company);
    rebuildSeconds = (Date.now() - rebuildStarted) / 1000;
    writer = await writes;
    await Promise.all(loops);

    expected = await copyFromPostgres(pool, company);
    await waitFor(
      'the pipeline to drain',
      async () => isDeepStrictEqual(await fullCopy(client()), expected),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    ).catch(async (error: Error) => {
      const { examples } = differences(await fullCopy(client()), expected);
      throw new Error(`${error.message}; a full export differs: ${examples.join('; ')}`);
    });
    for (const { partner } of [...partners, ...tokenPartners]) await partner.run();
    // Nothing changes any more: a token run receives nothing; the one after it finds every first
    // page it asks for already known, and each answer is a 304.
    for (const { partner } of tokenPartners) {
      const runs = [];
      for (let n = 0; n < 2; n++) {
        const before = partner.figures.records + partner.figures.deletions;
        await partner.run();
        runs.push({
          items: partner.figures.records + partner.figures.deletions - before,
          statuses: partner.figures.lastRunStatuses,
        });
      }
      quietRuns.push(runs);
    }

    const total = Object.values(writer.committed).reduce((sum, n) => sum + n, 0);
    console.log(
      `partner-sync: writer committed ${total} changes (${writer.lateTransactions} late transactions, ` +
        `${writer.abandoned} abandoned on conflicts) in ${WRITE_PHASE_MS / 1000} s; company rebuilt in ` +
        `${rebuildSeconds.toFixed(1)} s (${unavailable.count} runs waited out a 503); final state: ` +
        SYNCED.map(({ resource }) => `${expected.get(resource)?.size} ${resource}`).join(', '),
    );
  }, 240_000);

  it('the writer changed every table, with late commits', () => {
    const names = Object.keys(writer.committed);
    for (const table of ['site:', 'contact:', 'service:', 'category:', 'equipment:', 'consumable:']) {
      expect(
        names.some((name) => name.startsWith(table)),
        table,
      ).toBe(true);
    }
    expect(names).toContain('site: move to another company');
    expect(names).toContain('category: delete (its equipment moved first)');
    expect(writer.lateTransactions).toBeGreaterThan(5);
  });

  for (const [index, { name }] of TOKEN_CLOCKS.entries()) {
    it(`token partner, clock ${name}: its copy equals PostgreSQL, no miss; the rebuild was a 410 and a new export`, () => {
      const { partner } = tokenPartners[index]!;
      const { missing, stale, notDeleted, examples } = differences(partner.copy, expected);
      const f = partner.figures;
      console.log(
        `partner-sync: tokens, clock ${name}: ${f.runs} runs (${f.fullExports} with a full export, ` +
          `${f.expired} after a 410), ${f.records} records received (${f.duplicateRecords} duplicates, ` +
          `${f.duplicatesFromPreviousRun} of them brought by the run before too), ${f.deletions} deletions ` +
          `(${f.deletionsOfAbsentIds} of ids not held), ${f.statuses.get(304) ?? 0} answers 304 of ` +
          `${[...f.statuses.values()].reduce((a, b) => a + b, 0)}; misses: ${missing + stale + notDeleted} ` +
          `(${missing} missing, ${stale} stale, ${notDeleted} not deleted)`,
      );
      expect(examples).toEqual([]);
      expect(partner.copy).toEqual(expected);
      // The rebuild sent it back to a full export (a run or two of 410 around it); every other
      // run synced by tokens, and each export followed a 410 (none without cause). The README's
      // figure: 0-1 duplicates for a token partner, against hundreds with times.
      expect(f.expired).toBeGreaterThanOrEqual(1);
      expect(f.expired).toBeLessThanOrEqual(2);
      expect(f.fullExports).toBe(1 + f.expired);
      expect(f.runs - f.fullExports).toBeGreaterThanOrEqual(8);
      expect(f.duplicateRecords).toBeLessThanOrEqual(1);
      expect(f.deletions).toBeGreaterThan(0);
    });

    it(`token partner, clock ${name}: with nothing changed a run receives nothing, then costs only 304s`, () => {
      const [quiet, polled] = quietRuns[index]!;
      expect(quiet!.items).toBe(0);
      expect(polled!.items).toBe(0);
      // Two walks per resource, each one first page: all answered 304 from the kept pages.
      expect(polled!.statuses).toEqual(SYNCED.flatMap(() => [304, 304]));
    });
  }

  for (const [index, { name }] of CLOCKS.entries()) {
    it(`time partner, clock ${name}: its copy equals PostgreSQL, no miss`, () => {
      const { partner } = partners[index]!;
      const { missing, stale, notDeleted, examples } = differences(partner.copy, expected);
      const f = partner.figures;
      console.log(
        `partner-sync: times, clock ${name}: ${f.runs} runs (${f.fullExports} full exports), ` +
          `${f.records} records received (${f.duplicateRecords} duplicates), ` +
          `${f.deletions} deletions received (${f.deletionsOfAbsentIds} of ids not held); ` +
          `misses: ${missing + stale + notDeleted} (${missing} missing, ${stale} stale, ${notDeleted} not deleted)`,
      );
      expect(examples).toEqual([]);
      expect(partner.copy).toEqual(expected);
      // The rebuild's new file keeps deletions only since it was made: a 410 and a second export
      // (more while a run's start still lies before the new file's horizon). Most runs stay
      // incremental, so a miss of the time procedure could not hide behind full exports.
      expect(f.fullExports).toBeGreaterThanOrEqual(2);
      expect(f.runs - f.fullExports).toBeGreaterThanOrEqual(8);
      expect(f.deletions).toBeGreaterThan(0);
    });
  }

  it('a 304 leaves RateLimit-Remaining as it was', async () => {
    const headers = { authorization: `Bearer ${apiKey}` };
    const last = (await (await fetch(`${readSide.baseUrl}/v1/sites?limit=200`, { headers })).json()) as {
      links: { sync: string };
    };
    const first = await fetch(last.links.sync, { headers });
    const etag = first.headers.get('etag') ?? '';
    const remaining = first.headers.get('ratelimit-remaining');
    for (let n = 0; n < 3; n++) {
      const poll = await fetch(last.links.sync, { headers: { ...headers, 'if-none-match': etag } });
      expect(poll.status).toBe(304);
      expect(poll.headers.get('ratelimit-remaining')).toBe(remaining);
    }
    const spent = await fetch(`${readSide.baseUrl}/v1/me`, { headers });
    expect(Number(spent.headers.get('ratelimit-remaining'))).toBe(Number(remaining) - 1);
  });
});
