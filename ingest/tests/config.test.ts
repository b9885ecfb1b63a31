import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';

const base = { INGEST_KAFKA_BROKERS: '127.0.0.1:59092', INGEST_DATA_DIR: '/tmp/x' };

describe('parseConfig', () => {
  it('applies defaults and freezes', () => {
    const config = parseConfig(base);
    expect(config).toMatchObject({
      kafka: { brokers: ['127.0.0.1:59092'], groupId: 'pda-ingest', topicPrefix: 'pda', fromBeginning: true },
      admin: { port: 9464 },
      apply: { maxBatchEvents: 2_000 },
      decimalMode: 'precise',
      tombstones: { retentionSeconds: 35 * 86_400, pruneIntervalSeconds: 3_600 },
      maxOpenCompanies: 'auto',
      idleCloseSeconds: 120,
    });
    expect(Object.isFrozen(config)).toBe(true);
    // Frozen all the way down: a consumer cannot change what another one reads.
    for (const group of [config.kafka, config.kafka.brokers, config.admin, config.apply, config.tombstones])
      expect(Object.isFrozen(group)).toBe(true);
  });

  it('tombstone retention: seconds, at least 1; the prune interval 0 turns pruning off', () => {
    const config = parseConfig({
      ...base,
      INGEST_TOMBSTONE_RETENTION_S: '3',
      INGEST_TOMBSTONE_PRUNE_INTERVAL_S: '0',
    });
    expect(config.tombstones).toEqual({ retentionSeconds: 3, pruneIntervalSeconds: 0 });
    expect(() => parseConfig({ ...base, INGEST_TOMBSTONE_RETENTION_S: '0' })).toThrow(
      /INGEST_TOMBSTONE_RETENTION_S/,
    );
    expect(() => parseConfig({ ...base, INGEST_TOMBSTONE_PRUNE_INTERVAL_S: '1h' })).toThrow(
      /INGEST_TOMBSTONE_PRUNE_INTERVAL_S/,
    );
  });

  it("the writer's file cache: 'auto' or a positive integer; idle close in seconds, 0 = never", () => {
    expect(parseConfig({ ...base, INGEST_MAX_OPEN_COMPANIES: '300' }).maxOpenCompanies).toBe(300);
    expect(parseConfig({ ...base, INGEST_IDLE_CLOSE_S: '0' }).idleCloseSeconds).toBe(0);
    for (const bad of ['0', 'all', '2.5']) {
      expect(() => parseConfig({ ...base, INGEST_MAX_OPEN_COMPANIES: bad })).toThrow(
        /INGEST_MAX_OPEN_COMPANIES/,
      );
    }
    expect(() => parseConfig({ ...base, INGEST_IDLE_CLOSE_S: '-1' })).toThrow(/INGEST_IDLE_CLOSE_S/);
  });

  it('ignores variables outside its INGEST_ namespace', () => {
    expect(parseConfig({ ...base, API_PORT: '1', PATH: '/bin', INGESTION: 'x' }).kafka.groupId).toBe(
      'pda-ingest',
    );
  });

  it('parses lists, numbers and booleans from strings', () => {
    const config = parseConfig({
      ...base,
      INGEST_KAFKA_BROKERS: 'a:1, b:2',
      INGEST_ADMIN_PORT: '0',
      INGEST_FROM_BEGINNING: 'false',
      INGEST_READY_MAX_LAG: '5',
    });
    expect(config.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(config.admin.port).toBe(0);
    expect(config.kafka.fromBeginning).toBe(false);
    expect(config.readyMaxLag).toBe(5);
  });

  it.each([
    [{ INGEST_DATA_DIR: '/x' }, /INGEST_KAFKA_BROKERS/],
    [{ ...base, INGEST_KAFKA_BROKERS: 'localhost' }, /host:port/],
    [{ ...base, INGEST_ADMIN_PORT: '70000' }, /INGEST_ADMIN_PORT/],
    [{ ...base, INGEST_MAX_BATCH_EVENTS: 'lots' }, /INGEST_MAX_BATCH_EVENTS/],
    [{ ...base, INGEST_LOG_LEVEL: 'loud' }, /INGEST_LOG_LEVEL/],
    [{ ...base, INGEST_DECIMAL_MODE: 'double' }, /INGEST_DECIMAL_MODE/],
    [{ ...base, INGEST_KAFKA_BROKRES: 'a:1' }, /INGEST_KAFKA_BROKRES: unknown setting/],
    [
      { INGEST_DATA_DIR: '/x', INGEST_KAFKA_BROKRES: 'a:1' },
      /INGEST_KAFKA_BROKERS: .*; INGEST_KAFKA_BROKRES: unknown/,
    ],
  ])('rejects %j with one line naming the variable', (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
    try {
      parseConfig(env);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });
});
