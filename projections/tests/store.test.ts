import { describe, expect, it } from 'vitest';
import type { Change } from '../src/model/index.ts';
import { openControlReader, ReadHandle, readIngestState, sourceCurrentAt } from '../src/read/index.ts';
import { buildProjection, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { controlRows, dump, fixedClock, id, tempDataDir } from './helpers.ts';

const companyId = (n: number) => `cccccccc-0000-4000-8000-${n.toString().padStart(12, '0')}`;

describe('ProjectionStore', () => {
  it('gives the same rows whatever the bound of open company files', () => {
    const changes: Change[] = [];
    for (let i = 0; i < 60; i++) {
      changes.push(
        makeUpsert('sites', sampleRow('sites', { id: id(i), company_id: companyId(i % 7) }), 100 + i),
      );
    }
    // Interleave a move so an evicted file is reopened inside the batch.
    changes.push(makeUpsert('sites', sampleRow('sites', { id: id(0), company_id: companyId(6) }), 500));

    const dumps = [1, 3, 128].map((max) => {
      const dir = tempDataDir();
      const store = ProjectionStore.open({ dataDir: dir, maxOpenCompanies: max, clockUs: fixedClock() });
      const result = store.applyBatch(changes);
      expect(result).toMatchObject({ applied: 61, skipped: 0, rejected: 0, companies: 7 });
      store.close();
      return dump(dir);
    });
    expect(dumps[0]).toEqual(dumps[2]);
    expect(dumps[1]).toEqual(dumps[2]);
  });

  it('records ingest dead letters once per Kafka message, with the batch', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, nowMs: () => 1234 });
    const deadLetters = [
      {
        topic: 'pda.public.sites',
        partition: 2,
        offset: '9007199254740993',
        key: 'k'.repeat(100_000),
        reason: 'not JSON',
        table: 'sites',
      },
    ];
    expect(store.applyBatch([], { deadLetters })).toMatchObject({ applied: 0, deadLettered: 1 });
    store.applyBatch([], { deadLetters });
    const rows = controlRows(dir, 'dead_letters');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      dedupe_key: 'kafka:pda.public.sites/2/9007199254740993',
      stage: 'decode',
      offset: '9007199254740993',
      table_name: 'sites',
      reason: 'not JSON',
      recorded_at_ms: 1234,
    });
    // Where the message is and why, not what it held (dead-letters.ts); a key is cut to 1 KiB.
    expect(rows[0]).not.toHaveProperty('message_value');
    expect((rows[0]?.message_key as string).length).toBe(1024);
    store.close();
  });

  it('updates ingest_state in the control transaction', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, nowMs: () => 777 });
    store.applyBatch([
      makeUpsert('companies', sampleRow('companies', { id: companyId(1) }), 1, { tsMs: 500 }),
      makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: companyId(1) }), 2, { tsMs: 600 }),
    ]);
    store.applyBatch([
      makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: companyId(1) }), 2, { tsMs: 400 }),
    ]);
    expect(controlRows(dir, 'ingest_state')).toEqual([
      {
        lock: 1,
        last_batch_at_ms: 777,
        last_source_ts_ms: 600,
        events_applied_total: 2,
        source_current_at_ms: null,
      },
    ]);
    store.close();
  });

  it('keeps the newest source time known current (heartbeats), also from a batch without changes', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, nowMs: () => 777 });
    const state = () => {
      const handle = new ReadHandle(openControlReader(dir));
      try {
        return readIngestState(handle);
      } finally {
        handle.close();
      }
    };
    store.applyBatch([], { sourceCurrentAtMs: 5_000 });
    expect(state()).toMatchObject({ sourceCurrentAtMs: 5_000, lastSourceTsMs: null });
    // An older heartbeat never moves it back; a batch without one leaves it.
    store.applyBatch([], { sourceCurrentAtMs: 4_000 });
    store.applyBatch([
      makeUpsert('companies', sampleRow('companies', { id: companyId(1) }), 1, { tsMs: 6_000 }),
    ]);
    expect(state()).toMatchObject({ sourceCurrentAtMs: 5_000, lastSourceTsMs: 6_000 });
    expect(sourceCurrentAt(state())).toBe(6_000);
    store.applyBatch([], { sourceCurrentAtMs: 9_000 });
    expect(sourceCurrentAt(state())).toBe(9_000);
    store.close();
  });

  it('accepts position 0 (tests and fixtures may start there)', () => {
    const dir = tempDataDir();
    const result = buildProjection(dir, [
      makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: companyId(1) }), 0),
    ]);
    expect(result.applied).toBe(1);
  });

  it('refuses, never throws on, malformed changes', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir });
    const site = makeUpsert('sites', sampleRow('sites', { id: id(1), company_id: companyId(1) }), 1);
    const bad = [
      { ...site, table: 'pg_authid' },
      { ...site, position: { lsn: Number.NaN, tsMs: 0 } },
      { ...site, position: { lsn: -1, tsMs: 0 } },
      { ...site, row: { ...site.row, id: 42 } },
      { ...site, row: null, position: { lsn: 6, tsMs: 0 } },
      { kind: 'delete', table: 'sites', key: null, position: { lsn: 7, tsMs: 0 } },
      { kind: 'delete', table: 'sites', key: {}, position: { lsn: 3, tsMs: 0 } },
      makeUpsert('companies', sampleRow('companies', { id: '../../etc' }), 4),
      makeUpsert('api_keys', sampleRow('api_keys', { id: id(5), scopes: null }), 5),
    ] as Change[];
    const result = store.applyBatch([...bad, site]);
    expect(result).toMatchObject({ applied: 1, rejected: bad.length });
    expect(controlRows(dir, 'dead_letters')).toHaveLength(bad.length);
    store.close();
  });

  it('a key hash already held by another key is refused by SQLite and dead-lettered, not fatal', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir });
    const hash = 'f'.repeat(64);
    const result = store.applyBatch([
      makeUpsert('api_keys', sampleRow('api_keys', { id: id(1), key_sha256: hash }), 1),
      makeUpsert('api_keys', sampleRow('api_keys', { id: id(2), key_sha256: hash }), 2),
      makeUpsert('api_keys', sampleRow('api_keys', { id: id(3) }), 3),
    ]);
    expect(result.tables.api_keys).toEqual({ applied: 2, skipped: 0, rejected: 1 });
    expect(controlRows(dir, 'api_keys').map((r) => r.id)).toEqual([id(1), id(3)]);
    expect(controlRows(dir, 'dead_letters')).toMatchObject([
      { stage: 'apply', reason: expect.stringMatching(/UNIQUE/) },
    ]);
    store.close();
  });
});
