// The change feed as a stream (docs/public-data-api-v1.md, "Change feed", 9), against the real
// pipeline: PostgreSQL → Debezium → Kafka → ingest → SQLite → api (over HTTP, NDJSON).
//
// A partner exports a company of ~1,000 records in one stream from the start of the feed while a
// writer makes random changes to every exported table (test/src/random-writer.ts). Its first two
// connections are cut at random byte offsets; each time it resumes from the last position line it
// had stored. Caught up, it switches to `live=true`, is "killed" (its connection dropped mid-stream)
// and reconnects from its stored position. Once the writer stops and the pipeline has drained, its
// copy must equal PostgreSQL (0 missing, stale or undeleted), and what each resume received again
// is at most one chunk (200 changes). Last, the company is rebuilt under an open live stream: the
// stream ends with an error line `sync_window_expired`, and a new request from the stored position
// answers 410.
import { randomUUID } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { Resource, ResourceRecord } from '@pda/client';
import { createClient } from '@pda/client';
import { SCOPE_NAMES } from '@pda/operator-tools/scopes';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCompany, type WriterSummary, writeRandomly } from './src/random-writer.ts';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';
import { type Copy, copyFromPostgres, differences, fullCopy, SYNCED } from './src/sync-partner.ts';

const WRITE_PHASE_MS = 20_000;
/** Changes a chunk holds at most: what a resume may receive again (api/src/changes/changes-handler.ts). */
const CHUNK = 200;

let pool: pg.Pool;
let readSide: ReadSide;
const company = randomUUID();
const otherCompany = randomUUID();
let apiKey: string;

interface Line {
  op: string;
  type?: string;
  id?: string;
  data?: unknown;
  links?: { next: string };
  caught_up?: boolean;
  error?: { code: string };
}

type Ending = 'ended' | 'cut';

/**
 * The partner: a copy by resource and id, the `links.next` of the last position line it applied
 * up to, and per connection how many changes it received that it already held as they are.
 */
class StreamPartner {
  readonly copy: Copy = new Map(SYNCED.map(({ resource }) => [resource, new Map()]));
  position: string | undefined;
  readonly connections: { ending: Ending; changes: number; duplicates: number; lastLine?: Line }[] = [];

  /**
   * One connection from the stored position (the feed's start without one): applies changes and
   * positions as they come, until the stream ends or `cutAfterBytes` bytes arrived (then it drops
   * the connection without reading further: a cut at any byte, as a network or a crash would).
   */
  read(options: { live?: boolean; cutAfterBytes?: number; cutAfterMs?: number } = {}): Promise<Ending> {
    const start =
      this.position ??
      `${readSide.baseUrl}/v1/changes?include%5Bsites%5D=contacts&include%5Bequipment%5D=category`;
    const url = new URL(options.live ? `${start}&live=true` : start);
    const connection: StreamPartner['connections'][number] = { ending: 'ended', changes: 0, duplicates: 0 };
    this.connections.push(connection);
    return new Promise<Ending>((resolve, reject) => {
      const request = httpGet(url, {
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/x-ndjson' },
      });
      request.on('error', (error) => (connection.ending === 'cut' ? undefined : reject(error)));
      request.on('response', (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`stream answered ${response.statusCode}`));
          return;
        }
        let bytes = 0;
        let pending = '';
        const cut = () => {
          connection.ending = 'cut';
          request.destroy();
          resolve('cut');
        };
        const timer = options.cutAfterMs === undefined ? undefined : setTimeout(cut, options.cutAfterMs);
        response.on('data', (chunk: Buffer) => {
          if (connection.ending === 'cut') return;
          let text = chunk.toString('utf8');
          const limit = options.cutAfterBytes;
          if (limit !== undefined && bytes + chunk.length >= limit)
            text = chunk.subarray(0, limit - bytes).toString('utf8');
          bytes += chunk.length;
          pending += text;
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) if (line !== '') this.#take(JSON.parse(line) as Line, connection);
          if (limit !== undefined && bytes >= limit) cut();
        });
        response.on('end', () => {
          clearTimeout(timer);
          if (connection.ending !== 'cut') resolve('ended');
        });
      });
    });
  }

  #take(line: Line, connection: StreamPartner['connections'][number]): void {
    connection.lastLine = line;
    if (line.op === 'position') {
      this.position = line.links?.next;
      return;
    }
    if (line.op !== 'upsert' && line.op !== 'delete') return;
    connection.changes += 1;
    const records = this.copy.get(line.type as Resource)!;
    if (line.op === 'delete') {
      if (!records.delete(line.id!)) connection.duplicates += 1;
      return;
    }
    if (isDeepStrictEqual(records.get(line.id!), line.data)) connection.duplicates += 1;
    records.set(line.id!, line.data as ResourceRecord<Resource>);
  }
}

beforeAll(async () => {
  pool = pgPool(undefined, 12);
  await pool.query(
    "INSERT INTO companies (id, name, currency) VALUES ($1, 'Stream Snow', 'USD'), ($2, 'Stream Other', 'USD')",
    [company, otherCompany],
  );
  await seedCompany(pool, company, 400);
  apiKey = await issueKey(pool, company, [...SCOPE_NAMES], 'change feed stream e2e');
  readSide = await startReadSide({ name: 'change-feed-stream', listen: true });
  const seeded = await copyFromPostgres(pool, company);
  const client = createClient({ baseUrl: readSide.baseUrl, apiKey });
  await waitFor('the seed to be projected', async () => isDeepStrictEqual(await fullCopy(client), seeded), {
    timeoutMs: 90_000,
    intervalMs: 1_000,
  });
}, 240_000);

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

describe('a partner exporting and following the change feed as one stream', () => {
  const partner = new StreamPartner();
  let expected: Copy;
  let writer: WriterSummary;
  const cuts: number[] = [];

  beforeAll(async () => {
    const writes = writeRandomly(pool, { company, other: otherCompany }, { ms: WRITE_PHASE_MS });
    // The export: cut twice at random bytes of the first ~100 KB (the whole is several hundred KB).
    for (let i = 0; i < 2; i++) {
      const at = 2_000 + Math.floor(Math.random() * 100_000);
      cuts.push(at);
      expect(await partner.read({ cutAfterBytes: at })).toBe('cut');
    }
    expect(await partner.read()).toBe('ended');
    // Live, "killed" after 4 s mid-stream, then reconnected until the pipeline has drained.
    expect(await partner.read({ live: true, cutAfterMs: 4_000 })).toBe('cut');
    writer = await writes;
    expected = await copyFromPostgres(pool, company);
    const live = partner.read({ live: true });
    await waitFor('the partner to reach PostgreSQL', () => isDeepStrictEqual(partner.copy, expected), {
      timeoutMs: 60_000,
      intervalMs: 250,
    }).catch((error: Error) => {
      const { examples } = differences(partner.copy, expected);
      throw new Error(`${error.message}; the partner's copy differs: ${examples.join('; ')}`);
    });
    // The company rebuilt under the open live stream: its last line says so.
    await readSide.rebuildCompany(company);
    expect(await live).toBe('ended');
    const c = partner.connections;
    console.log(
      `change-feed-stream: writer committed ${Object.values(writer.committed).reduce((a, n) => a + n, 0)} changes; ` +
        `${c.length} connections (cut at ${cuts.join(', ')} bytes, one live connection dropped after 4 s): ` +
        c.map((x) => `${x.ending} after ${x.changes} changes, ${x.duplicates} held already`).join('; '),
    );
  }, 240_000);

  it("the partner's copy equals PostgreSQL: nothing missing, stale or left undeleted", () => {
    expect(differences(partner.copy, expected)).toEqual({
      missing: 0,
      stale: 0,
      notDeleted: 0,
      examples: [],
    });
  });

  it('each resume received again at most one chunk', () => {
    const [, ...resumed] = partner.connections;
    expect(resumed).toHaveLength(4);
    for (const connection of resumed) expect(connection.duplicates).toBeLessThanOrEqual(CHUNK);
    // The export was cut twice, ended caught up once; the live stream was dropped once.
    expect(partner.connections.map((c) => c.ending)).toEqual(['cut', 'cut', 'ended', 'cut', 'ended']);
  });

  it('a rebuild ends a live stream with sync_window_expired, and the stored position answers 410', async () => {
    const last = partner.connections[partner.connections.length - 1]?.lastLine;
    expect(last).toMatchObject({ op: 'error', error: { code: 'sync_window_expired' } });
    const again = await fetch(partner.position!, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(again.status).toBe(410);
  });
});
