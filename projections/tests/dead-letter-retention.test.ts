import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { controlPath, fileVersion, latestVersion, migrate } from '../src/model/index.ts';
import { makeUpsert, sampleRow } from '../src/testing/index.ts';
import {
  type DeadLetter,
  type DeadLetterLimits,
  openControlWriter,
  ProjectionStore,
} from '../src/write/index.ts';
import { controlRows, fixedClock, id, tempDataDir } from './helpers.ts';

// Dead letters (src/write/upkeep/dead-letters.ts, control migration 005): where a refused message is and
// why, never the row it carried; pruned by age and by count, oldest first, in bounded steps.

const EMAIL = 'jane.doe@example.com';
const PHONE = '+1 416 555 0199';
const DAY_MS = 86_400_000;

function letter(n: number): DeadLetter {
  return {
    topic: 'pda.public.sites',
    partition: 0,
    offset: String(n),
    key: `{"id":"${id(n)}"}`,
    reason: 'bad',
  };
}

/** A store whose wall clock (dead letters' recorded_at_ms) the test moves. */
function storeAt(dataDir: string, limits: DeadLetterLimits) {
  let now = 1_000 * DAY_MS;
  const store = ProjectionStore.open({
    dataDir,
    clockUs: fixedClock(),
    nowMs: () => now,
    deadLetters: limits,
  });
  return {
    store,
    set: (ms: number) => {
      now = ms;
    },
  };
}

const offsets = (dataDir: string) => controlRows(dataDir, 'dead_letters').map((row) => Number(row.offset));

describe('a new dead letter', () => {
  it('keeps key, topic, partition, offset, op, table and reason, and no value of the row', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(), nowMs: () => 5 });
    const contact = sampleRow('site_contacts', {
      id: id(7),
      site_id: id(1),
      company_id: 'not-a-uuid', // refused: the change is dead-lettered
      name: 'Jane Doe',
      email: EMAIL,
      phone: PHONE,
    });
    const refused = {
      ...makeUpsert('site_contacts', contact, 10, { op: 'u' }),
      origin: { topic: 'pda.public.site_contacts', partition: 1, offset: '77' },
    };
    const undecodable: DeadLetter = { ...letter(3), reason: 'value is not valid JSON: Unexpected token' };
    expect(store.applyBatch([refused], { deadLetters: [undecodable] })).toMatchObject({ deadLettered: 2 });
    store.close();

    const rows = controlRows(dir, 'dead_letters');
    expect(rows).toEqual([
      {
        seq: 1,
        dedupe_key: 'kafka:pda.public.sites/0/3',
        stage: 'decode',
        topic: 'pda.public.sites',
        partition: 0,
        offset: '3',
        table_name: null,
        message_key: `{"id":"${id(3)}"}`,
        op: null,
        reason: 'value is not valid JSON: Unexpected token',
        recorded_at_ms: 5,
      },
      {
        seq: 2,
        dedupe_key: 'kafka:pda.public.site_contacts/1/77',
        stage: 'apply',
        topic: 'pda.public.site_contacts',
        partition: 1,
        offset: '77',
        table_name: 'site_contacts',
        message_key: `{"id":"${id(7)}"}`,
        op: 'u',
        reason: 'company_id is missing or not a uuid',
        recorded_at_ms: 5,
      },
    ]);
    // Nowhere in the file either (the company file of A was never written).
    const bytes = readFileSync(controlPath(dir)).toString('latin1');
    for (const value of [EMAIL, PHONE, 'Jane Doe']) expect(bytes).not.toContain(value);
  });
});

describe('dead-letter retention', () => {
  it('deletes the letters older than the window, oldest first, in bounded steps', () => {
    const dir = tempDataDir();
    const { store, set } = storeAt(dir, { retentionMs: DAY_MS, maxRows: 1_000 });
    for (let n = 1; n <= 10; n++) {
      set(n * DAY_MS); // one letter a day
      store.applyBatch([], { deadLetters: [letter(n)] });
    }
    set(10.5 * DAY_MS); // letters 1..9 are more than a day old
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 4 });
    expect(offsets(dir)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 4 });
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 1 }); // fewer than the step: done
    expect(offsets(dir)).toEqual([10]);
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 0 });
    store.close();
  });

  it('keeps at most the cap: the oldest go first, in bounded steps', () => {
    const dir = tempDataDir();
    const before = storeAt(dir, { retentionMs: 365 * DAY_MS, maxRows: 100 });
    before.store.applyBatch([], { deadLetters: Array.from({ length: 10 }, (_, i) => letter(i + 1)) });
    before.store.close();

    const { store } = storeAt(dir, { retentionMs: 365 * DAY_MS, maxRows: 3 });
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 4 });
    expect(offsets(dir)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 3 });
    expect(offsets(dir)).toEqual([8, 9, 10]);
    expect(store.pruneDeadLetters(4)).toEqual({ pruned: 0 });
    store.close();
  });

  it('a batch that adds letters beyond the cap deletes as many of the oldest, never more', () => {
    const dir = tempDataDir();
    const { store } = storeAt(dir, { retentionMs: 365 * DAY_MS, maxRows: 3 });
    store.applyBatch([], { deadLetters: [1, 2, 3, 4, 5].map(letter) });
    expect(offsets(dir)).toEqual([3, 4, 5]);
    store.applyBatch([], { deadLetters: [letter(6)] });
    expect(offsets(dir)).toEqual([4, 5, 6]);
    // A redelivered batch adds nothing, so deletes nothing.
    store.applyBatch([], { deadLetters: [letter(6)] });
    expect(offsets(dir)).toEqual([4, 5, 6]);
    store.close();

    // Far beyond the cap (a smaller cap than the letters kept): one letter added, one deleted; the
    // prune pass brings the rest down in its steps.
    const { store: smaller } = storeAt(dir, { retentionMs: 365 * DAY_MS, maxRows: 1 });
    smaller.applyBatch([], { deadLetters: [letter(7)] });
    expect(offsets(dir)).toEqual([5, 6, 7]);
    expect(smaller.pruneDeadLetters(1_000)).toEqual({ pruned: 2 });
    expect(offsets(dir)).toEqual([7]);
    smaller.close();
  });
});

describe('control migration 005', () => {
  it('rewrites the letters recorded before without their values, and leaves none in the file', () => {
    const dir = tempDataDir();
    const path = controlPath(dir);
    const old = new Database(path);
    migrate(old, 'control', 4);
    const row = JSON.stringify({
      row: { id: id(7), name: 'Jane Doe', email: EMAIL, phone: PHONE },
      unavailable: [],
    });
    const insert = old.prepare(
      `INSERT INTO dead_letters (dedupe_key, stage, topic, partition, offset, table_name, message_key,
         message_value, reason, recorded_at_ms) VALUES (?, ?, 'pda.public.site_contacts', 0, ?, 'site_contacts', ?, ?, ?, 9)`,
    );
    insert.run(
      'kafka:a/0/1',
      'apply',
      '1',
      `{"id":"${id(7)}"}`,
      row.repeat(200),
      'company_id is missing or not a uuid',
    );
    insert.run('kafka:a/0/2', 'decode', '2', 'k'.repeat(5_000), row, 'r'.repeat(5_000));
    old.close();
    expect(readFileSync(path).toString('latin1')).toContain(EMAIL);

    const db = openControlWriter(dir);
    expect(fileVersion(db)).toBe(latestVersion('control'));
    const rows = db.prepare('SELECT * FROM dead_letters ORDER BY seq').all() as Record<string, unknown>[];
    db.close();
    expect(rows.map((r) => Object.keys(r))).toEqual([
      [
        'seq',
        'dedupe_key',
        'stage',
        'topic',
        'partition',
        'offset',
        'table_name',
        'message_key',
        'op',
        'reason',
        'recorded_at_ms',
      ],
      expect.any(Array),
    ]);
    expect(rows[0]).toMatchObject({ seq: 1, stage: 'apply', message_key: `{"id":"${id(7)}"}`, op: null });
    expect(rows[1]).toMatchObject({ seq: 2, offset: '2', recorded_at_ms: 9 });
    expect((rows[1]?.message_key as string).length).toBe(1024);
    expect((rows[1]?.reason as string).length).toBe(1024);
    // The dropped table's pages were zeroed (secure_delete), not only unlinked.
    const bytes = readFileSync(path).toString('latin1');
    for (const value of [EMAIL, PHONE, 'Jane Doe']) expect(bytes).not.toContain(value);
  });
});
