import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';

const base = { INGEST_KAFKA_BROKERS: '127.0.0.1:59092', INGEST_DATA_DIR: '/tmp/x' };

describe('parseConfig', () => {
  it('applies defaults and freezes', () => {
    const config = parseConfig(base);
    expect(config).toMatchObject({
      INGEST_KAFKA_BROKERS: ['127.0.0.1:59092'],
      INGEST_GROUP_ID: 'pda-ingest',
      INGEST_TOPIC_PREFIX: 'pda',
      INGEST_ADMIN_PORT: 9464,
      INGEST_MAX_BATCH_EVENTS: 2_000,
      INGEST_FROM_BEGINNING: true,
      INGEST_DECIMAL_MODE: 'precise',
      INGEST_TOMBSTONE_RETENTION_S: 35 * 86_400,
      INGEST_TOMBSTONE_PRUNE_INTERVAL_S: 3_600,
      INGEST_MAX_OPEN_COMPANIES: 'auto',
      INGEST_IDLE_CLOSE_S: 120,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.INGEST_KAFKA_BROKERS)).toBe(true);
  });

  it('tombstone retention: seconds, at least 1; the prune interval 0 turns pruning off', () => {
    const config = parseConfig({
      ...base,
      INGEST_TOMBSTONE_RETENTION_S: '3',
      INGEST_TOMBSTONE_PRUNE_INTERVAL_S: '0',
    });
    expect(config.INGEST_TOMBSTONE_RETENTION_S).toBe(3);
    expect(config.INGEST_TOMBSTONE_PRUNE_INTERVAL_S).toBe(0);
    expect(() => parseConfig({ ...base, INGEST_TOMBSTONE_RETENTION_S: '0' })).toThrow(
      /INGEST_TOMBSTONE_RETENTION_S/,
    );
    expect(() => parseConfig({ ...base, INGEST_TOMBSTONE_PRUNE_INTERVAL_S: '1h' })).toThrow(
      /INGEST_TOMBSTONE_PRUNE_INTERVAL_S/,
    );
  });

  it("the writer's file cache: 'auto' or a positive integer; idle close in seconds, 0 = never", () => {
    expect(parseConfig({ ...base, INGEST_MAX_OPEN_COMPANIES: '300' }).INGEST_MAX_OPEN_COMPANIES).toBe(300);
    expect(parseConfig({ ...base, INGEST_IDLE_CLOSE_S: '0' }).INGEST_IDLE_CLOSE_S).toBe(0);
    for (const bad of ['0', 'all', '2.5']) {
      expect(() => parseConfig({ ...base, INGEST_MAX_OPEN_COMPANIES: bad })).toThrow(
        /INGEST_MAX_OPEN_COMPANIES/,
      );
    }
    expect(() => parseConfig({ ...base, INGEST_IDLE_CLOSE_S: '-1' })).toThrow(/INGEST_IDLE_CLOSE_S/);
  });

  it('ignores variables outside its INGEST_ namespace', () => {
    expect(parseConfig({ ...base, API_PORT: '1', PATH: '/bin', INGESTION: 'x' }).INGEST_GROUP_ID).toBe(
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
    expect(config.INGEST_KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
    expect(config.INGEST_ADMIN_PORT).toBe(0);
    expect(config.INGEST_FROM_BEGINNING).toBe(false);
    expect(config.INGEST_READY_MAX_LAG).toBe(5);
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
