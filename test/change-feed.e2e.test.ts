// The change feed (docs/public-data-api-v1.md, "Change feed"), followed live through @pda/client
// against the real pipeline: PostgreSQL → Debezium → Kafka → ingest → SQLite → api (over HTTP).
//
// One partner follows GET /v1/changes with `client.follow` (wait=2) from the start of the feed
// (an empty copy: the feed is its full export) while a writer makes random changes to every
// exported table (test/src/random-writer.ts: inserts, updates of every kind of column, deletes,
// contacts and categories changed, sites moved to another company and back, transactions that
// commit seconds late), deletes and re-creates services under the same id, and writes a probe
// consumable every 400 ms to time commit → partner. Twice the partner "crashes" half-way through
// applying a page: its iterator is dropped without storing the page's position, and a new
// `follow({ from: <stored position> })` resumes. Once the writer stops and the pipeline has drained,
// the partner's copy must equal PostgreSQL exactly (test/src/documents-from-postgres.ts): 0 missing,
// 0 stale, 0 not deleted. Figures: changes received, duplicates (an upsert of what the copy already
// held as is: the half-applied pages come again), resumes, and the latency distributions.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ApiError,
  type Change,
  type Client,
  createClient,
  type Resource,
  type ResourceRecord,
} from '@pda/client';
import { SCOPE_NAMES } from '@pda/operator-tools/scopes';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCompany, type WriterSummary, writeRandomly } from './src/random-writer.ts';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';
import { type Copy, copyFromPostgres, differences, fullCopy, SYNCED } from './src/sync-partner.ts';

const WRITE_PHASE_MS = 20_000;
const CRASH_AT_MS = [6_000, 13_000];
const PROBE_EVERY_MS = 400;
const RECREATE_EVERY_MS = 600;

let pool: pg.Pool;
let readSide: ReadSide;
const company = randomUUID();
const otherCompany = randomUUID();
let apiKey: string;

const client = (): Client => createClient({ baseUrl: readSide.baseUrl, apiKey });

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/**
 * The partner: a copy by resource and id, the position of the last page it applied in full, and
 * what it counted. `crash()` makes it stop half-way through its next non-empty page.
 */
class Follower {
  readonly copy: Copy = new Map(SYNCED.map(({ resource }) => [resource, new Map()]));
  position: string | undefined;
  readonly figures = {
    pages: 0,
    upserts: 0,
    deletes: 0,
    duplicates: 0,
    deletesOfAbsent: 0,
    resumes: 0,
    unavailable: 0,
  };
  /** Receive time minus the change's projection change time (ms), per change. */
  readonly feedLatencyMs: number[] = [];
  readonly #onChange: (change: Change, at: number) => void;
  #crashRequested = false;
  #stopWhenCaughtUp = false;
  caughtUp = false;
  /** Set by the first caught-up page: from then on changes arrive live. */
  caughtUpOnce = false;
  /** changed_at of the last change of the last page applied in full (where `position` points). */
  #positionChangedAt: string | undefined;
  /**
   * Per resume: where the stored position pointed and the first change the new life received.
   * A follower that resumed from its position starts at or after it; one that ignored it would
   * start again from the feed's first change (the seed's, far older).
   */
  readonly resumedAt: { stored: string; first: string }[] = [];

  constructor(onChange: (change: Change, at: number) => void) {
    this.#onChange = onChange;
  }

  crash(): void {
    this.#crashRequested = true;
  }

  stopWhenCaughtUp(): void {
    this.#stopWhenCaughtUp = true;
  }

  /** Follows until told to stop, starting a new iterator (a restart) after each crash. */
  async run(): Promise<void> {
    for (;;) {
      let crashed: boolean;
      try {
        crashed = await this.#follow();
      } catch (error) {
        // A 503 the client's retries did not outlast: go on from the stored position.
        if (!(error instanceof ApiError) || error.status !== 503) throw error;
        this.figures.unavailable += 1;
        continue;
      }
      if (!crashed) return;
      this.figures.resumes += 1;
    }
  }

  /** One life of the partner: true when it crashed. */
  async #follow(): Promise<boolean> {
    const resuming = this.figures.resumes > 0 && this.resumedAt.length < this.figures.resumes;
    const feed = client().follow({
      ...(this.position ? { from: this.position } : {}),
      include: { sites: 'contacts', equipment: 'category' },
      limit: 100,
      wait: 2,
    });
    for await (const page of feed) {
      this.figures.pages += 1;
      const at = Date.now();
      const first = page.changes[0];
      if (resuming && first && this.#positionChangedAt && this.resumedAt.length < this.figures.resumes) {
        this.resumedAt.push({ stored: this.#positionChangedAt, first: first.changed_at });
      }
      const crashing = this.#crashRequested && page.changes.length >= 1;
      const applied = crashing ? page.changes.slice(0, Math.ceil(page.changes.length / 2)) : page.changes;
      for (const change of applied) this.#apply(change, at);
      if (crashing) {
        this.#crashRequested = false;
        return true; // the loop's exit drops the iterator; the position stays the previous page's
      }
      this.position = page.position;
      const last = page.changes[page.changes.length - 1];
      if (last) this.#positionChangedAt = last.changed_at;
      this.caughtUp = page.caughtUp;
      if (page.caughtUp) this.caughtUpOnce = true;
      if (page.caughtUp && this.#stopWhenCaughtUp) return false;
    }
    return false;
  }

  #apply(change: Change, at: number): void {
    this.#onChange(change, at);
    // Live changes only: the export part of the feed (the seed) has old change times.
    if (this.caughtUpOnce) this.feedLatencyMs.push(at - Date.parse(change.changed_at));
    const records = this.copy.get(change.type as Resource)!;
    if (change.op === 'delete') {
      this.figures.deletes += 1;
      if (!records.delete(change.id)) this.figures.deletesOfAbsent += 1;
      return;
    }
    this.figures.upserts += 1;
    if (isDeepStrictEqual(records.get(change.id), change.data)) this.figures.duplicates += 1;
    records.set(change.id, change.data as ResourceRecord<Resource>);
  }
}

beforeAll(async () => {
  pool = pgPool(undefined, 12);
  await pool.query(
    "INSERT INTO companies (id, name, currency) VALUES ($1, 'Change Feed Snow', 'USD'), ($2, 'Change Feed Other', 'USD')",
    [company, otherCompany],
  );
  await seedCompany(pool, company, 30);
  apiKey = await issueKey(pool, company, [...SCOPE_NAMES], 'change feed e2e');
  readSide = await startReadSide({ name: 'change-feed', listen: true });
  const seeded = await copyFromPostgres(pool, company);
  await waitFor('the seed to be projected', async () => isDeepStrictEqual(await fullCopy(client()), seeded), {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
}, 120_000);

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

describe('a partner following the change feed through the real pipeline', () => {
  let expected: Copy;
  let writer: WriterSummary;
  let follower: Follower;
  const commitLatencyMs: number[] = [];
  const recreated = { count: 0, seenDeleteThenUpsert: 0 };
  let wallSeconds = 0;

  beforeAll(async () => {
    const started = Date.now();
    // The probe: a consumable renamed `probe <n>` every PROBE_EVERY_MS; committed[n] is when.
    // Its own row, written back if the random writer deleted it.
    const probeId = randomUUID();
    const committedAt = new Map<string, number>();
    const lastOp = new Map<string, string>();
    follower = new Follower((change, at) => {
      const name = (change.data as { name?: string } | undefined)?.name;
      if (change.id === probeId && name?.startsWith('probe ')) {
        const sent = committedAt.get(name);
        if (sent !== undefined && !committedAt.has(`${name} seen`)) {
          committedAt.set(`${name} seen`, at);
          commitLatencyMs.push(at - sent);
        }
      }
      const key = `${change.type}/${change.id}`;
      if (change.op === 'upsert' && lastOp.get(key) === 'delete' && change.type === 'services') {
        recreated.seenDeleteThenUpsert += 1;
      }
      lastOp.set(key, change.op);
    });
    const following = follower.run();

    let writing = true;
    const writes = writeRandomly(pool, { company, other: otherCompany }, { ms: WRITE_PHASE_MS }).finally(
      () => {
        writing = false;
      },
    );
    const probes = (async () => {
      for (let n = 1; writing; n++) {
        await pool.query(
          `INSERT INTO consumables (id, company_id, name, group_name, default_client_rate_amount,
             default_client_rate_currency, default_subcontractor_rate_amount, default_subcontractor_rate_currency)
           VALUES ($1, $2, $3, 'de_icing', '1.00', 'USD', '1.00', 'USD')
           ON CONFLICT (id) DO UPDATE SET name = excluded.name`,
          [probeId, company, `probe ${n}`],
        );
        committedAt.set(`probe ${n}`, Date.now());
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
    })();
    // Delete a service and insert it again under the same id, a moment later.
    const recreations = (async () => {
      while (writing) {
        const { rows: gone } = await pool.query(
          `DELETE FROM services WHERE id = (SELECT id FROM services WHERE company_id = $1 ORDER BY random() LIMIT 1)
           RETURNING row_to_json(services.*) AS row`,
          [company],
        );
        await new Promise((resolve) => setTimeout(resolve, 400));
        if (gone[0]) {
          await pool.query(
            'INSERT INTO services SELECT * FROM json_populate_record(null::services, $1::json)',
            [JSON.stringify(gone[0].row)],
          );
          recreated.count += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, RECREATE_EVERY_MS));
      }
    })();
    const crashes = CRASH_AT_MS.map(
      (ms) => new Promise<void>((resolve) => setTimeout(() => resolve(follower.crash()), ms)),
    );

    writer = await writes;
    await Promise.all([probes, recreations, ...crashes]);
    expected = await copyFromPostgres(pool, company);
    // Drained: the partner's copy reaches PostgreSQL's state (a miss would keep it from ever doing so).
    await waitFor('the partner to reach PostgreSQL', () => isDeepStrictEqual(follower.copy, expected), {
      timeoutMs: 30_000,
      intervalMs: 250,
    }).catch((error: Error) => {
      const { examples } = differences(follower.copy, expected);
      throw new Error(`${error.message}; the partner's copy differs: ${examples.join('; ')}`);
    });
    follower.stopWhenCaughtUp();
    await following;
    wallSeconds = (Date.now() - started) / 1000;

    const f = follower.figures;
    const total = Object.values(writer.committed).reduce((sum, n) => sum + n, 0);
    const feed = follower.feedLatencyMs.filter((ms) => ms >= 0);
    console.log(
      `change-feed: writer committed ${total} changes (${writer.lateTransactions} late transactions, ` +
        `${recreated.count} delete-then-recreate) in ${WRITE_PHASE_MS / 1000} s; the partner received ` +
        `${f.upserts + f.deletes} changes (${f.upserts} upserts, ${f.deletes} deletes) in ${f.pages} pages, ` +
        `${f.duplicates} duplicates, ${f.resumes} resumes, ${differences(follower.copy, expected).missing} misses; commit→partner p50 ` +
        `${percentile(commitLatencyMs, 50)} ms, p99 ${percentile(commitLatencyMs, 99)} ms over ${commitLatencyMs.length} ` +
        `probes; projection→partner (live) p50 ${percentile(feed, 50)} ms, p99 ${percentile(feed, 99)} ms; final state: ` +
        SYNCED.map(({ resource }) => `${expected.get(resource)?.size} ${resource}`).join(', ') +
        `; ${wallSeconds.toFixed(1)} s`,
    );
  }, 120_000);

  it('the writer changed every table, with late commits and re-creates', () => {
    const names = Object.keys(writer.committed);
    for (const table of ['site:', 'contact:', 'service:', 'category:', 'equipment:', 'consumable:']) {
      expect(
        names.some((name) => name.startsWith(table)),
        table,
      ).toBe(true);
    }
    expect(writer.lateTransactions).toBeGreaterThan(3);
    expect(recreated.count).toBeGreaterThan(5);
  });

  it("the partner's copy equals PostgreSQL: nothing missing, stale or left undeleted", () => {
    expect(differences(follower.copy, expected)).toEqual({
      missing: 0,
      stale: 0,
      notDeleted: 0,
      examples: [],
    });
  });

  it('it crashed twice half-way through a page and resumed from its stored position', () => {
    // The half-applied pages come again (duplicates, or newer versions when changed since): logged.
    expect(follower.figures.resumes).toBe(2);
    // Each new life began at or after the stored position, not at the feed's start (the times are
    // RFC 3339 with six fraction digits in UTC: their text order is their time order).
    expect(follower.resumedAt).toHaveLength(2);
    for (const { stored, first } of follower.resumedAt)
      expect(first >= stored, `${first} >= ${stored}`).toBe(true);
  });

  it('changes reached it live: the probes arrived, deletes and re-creates in order', () => {
    expect(commitLatencyMs.length).toBeGreaterThan(WRITE_PHASE_MS / PROBE_EVERY_MS / 3);
    expect(percentile(commitLatencyMs, 50)).toBeLessThan(5_000);
    expect(recreated.seenDeleteThenUpsert).toBeGreaterThan(0);
  });
});
