import { describe, expect, test } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';

// API_* parsed once, with defaults, frozen; bad or unknown settings refuse to start.

const required = { API_DATA_DIR: '/data', API_CURSOR_SECRET: 's'.repeat(32) };

describe('parseConfig', () => {
  test('defaults', () => {
    const config = parseConfig(required);
    expect(config).toMatchObject({
      dataDir: '/data',
      host: '127.0.0.1',
      port: 8080,
      admin: { host: '127.0.0.1', port: 9465 },
      publicBaseUrl: 'http://127.0.0.1:8080',
      rateLimit: { max: 600, windowMs: 60_000, redisUrl: undefined },
      maxOpenCompanies: 'auto',
      updatedSinceOverlapMs: 60_000,
      healthMaxStalenessSeconds: undefined,
      trustProxy: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('values from the environment; the public base URL loses its trailing slash', () => {
    const config = parseConfig({
      ...required,
      API_PORT: '9000',
      API_PUBLIC_BASE_URL: 'https://api.example.com/public/',
      API_UPDATED_SINCE_OVERLAP_MS: '1000',
      API_TRUST_PROXY: 'true',
      API_REDIS_URL: 'redis://127.0.0.1:6379',
      OTHER_TOOL_SETTING: 'ignored',
    });
    expect(config.port).toBe(9000);
    expect(config.publicBaseUrl).toBe('https://api.example.com/public');
    expect(config.updatedSinceOverlapMs).toBe(1000);
    expect(config.trustProxy).toBe(true);
    expect(config.rateLimit.redisUrl).toBe('redis://127.0.0.1:6379');
  });

  test("API_MAX_OPEN_COMPANIES: 'auto' or a positive integer, anything else refused", () => {
    expect(parseConfig({ ...required, API_MAX_OPEN_COMPANIES: 'auto' }).maxOpenCompanies).toBe('auto');
    expect(parseConfig({ ...required, API_MAX_OPEN_COMPANIES: '300' }).maxOpenCompanies).toBe(300);
    for (const bad of ['0', '-5', 'lots', '1.5']) {
      expect(() => parseConfig({ ...required, API_MAX_OPEN_COMPANIES: bad })).toThrow(
        /API_MAX_OPEN_COMPANIES/,
      );
    }
  });

  test('fair shares: 8 / 16 in progress, 100 held and 2 streams per key by default; 0 turns one off; others refused', () => {
    expect(parseConfig(required).fairShares).toEqual({
      perKey: 8,
      perCompany: 16,
      heldPerKey: 100,
      streamsPerKey: 2,
      turns: true,
    });
    const set = parseConfig({
      ...required,
      API_MAX_IN_PROGRESS_PER_KEY: '0',
      API_MAX_IN_PROGRESS_PER_COMPANY: '40',
      API_MAX_HELD_REQUESTS_PER_KEY: '5',
      API_MAX_STREAMS_PER_KEY: '0',
      API_FAIR_TURNS: 'false',
    });
    expect(set.fairShares).toEqual({
      perKey: 0,
      perCompany: 40,
      heldPerKey: 5,
      streamsPerKey: 0,
      turns: false,
    });
    expect(parseConfig(required).streams).toEqual({ heartbeatMs: 15_000, lifetimeMs: 300_000 });
    expect(() => parseConfig({ ...required, API_FAIR_TURNS: 'sometimes' })).toThrow(/API_FAIR_TURNS/);
    for (const name of [
      'API_MAX_IN_PROGRESS_PER_KEY',
      'API_MAX_IN_PROGRESS_PER_COMPANY',
      'API_MAX_HELD_REQUESTS_PER_KEY',
      'API_MAX_STREAMS_PER_KEY',
      'API_STREAM_HEARTBEAT_S',
      'API_STREAM_MAX_LIFETIME_S',
    ]) {
      for (const bad of ['-1', '1.5', 'many']) {
        expect(() => parseConfig({ ...required, [name]: bad })).toThrow(new RegExp(name));
      }
    }
  });

  test('API_REUSE_PORT: off by default; true/1 or false/0, anything else refused', () => {
    expect(parseConfig(required).reusePort).toBe(false);
    expect(parseConfig({ ...required, API_REUSE_PORT: 'true' }).reusePort).toBe(true);
    expect(parseConfig({ ...required, API_REUSE_PORT: '0' }).reusePort).toBe(false);
    expect(() => parseConfig({ ...required, API_REUSE_PORT: 'yes' })).toThrow(/API_REUSE_PORT/);
  });

  test('the admin port: its own address; 0 picks a free port, even beside API_PORT=0', () => {
    expect(parseConfig({ ...required, API_ADMIN_HOST: '0.0.0.0', API_ADMIN_PORT: '9100' }).admin).toEqual({
      host: '0.0.0.0',
      port: 9100,
    });
    expect(parseConfig({ ...required, API_PORT: '0', API_ADMIN_PORT: '0' }).admin.port).toBe(0);
  });

  test.each([
    [{}, 'API_DATA_DIR'],
    [{ API_DATA_DIR: '/d', API_CURSOR_SECRET: 'short' }, 'API_CURSOR_SECRET'],
    [{ ...required, API_PORT: 'eighty' }, 'API_PORT'],
    [{ ...required, API_PUBLIC_BASE_URL: 'ftp://x' }, 'API_PUBLIC_BASE_URL'],
    [{ ...required, API_REDIS_URL: 'http://x' }, 'API_REDIS_URL'],
    [{ ...required, API_LOG_LEVEL: 'loud' }, 'API_LOG_LEVEL'],
    [{ ...required, API_RATE_LIMT_MAX: '5' }, 'API_RATE_LIMT_MAX: unknown setting'],
    [{ ...required, API_ADMIN_PORT: 'nine' }, 'API_ADMIN_PORT'],
    [{ ...required, API_ADMIN_PORT: '70000' }, 'API_ADMIN_PORT'],
    [{ ...required, API_ADMIN_HOST: '' }, 'API_ADMIN_HOST'],
    [{ ...required, API_PORT: '9000', API_ADMIN_PORT: '9000' }, 'API_ADMIN_PORT: must differ from API_PORT'],
  ])('%j → ConfigError naming %s', (env, name) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(name);
  });
});
