import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createStorageState } from '../src/batch/storage-state.ts';
import { createMetrics } from '../src/observability/metrics.ts';

const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const readOnly = Object.assign(new Error('attempt to write a readonly database'), {
  code: 'SQLITE_READONLY',
});
const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'pda-storage-state-'));
  dirs.push(dir);
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const metrics = createMetrics();
  let now = 1_000_000;
  const state = createStorageState({ dataDir: () => dir, logger, metrics, now: () => now });
  const gauge = async (kind: string) =>
    (await metrics.storageFault.get()).values.find((v) => v.labels.kind === kind)?.value;
  const advance = (ms: number) => {
    now += ms;
  };
  return { state, lines, gauge, advance };
}

describe('storage state', () => {
  it('one warning per fault, however many partitions and retries fail; one line when it ends', async () => {
    const { state, lines, gauge, advance } = setup();
    expect(state.health()).toEqual({ status: 'ok' });
    for (let i = 0; i < 30; i++) {
      expect(state.failed(full)).toBe(true);
      advance(100);
    }
    expect(lines.filter((l) => l.level === 40).map((l) => l.storage)).toEqual(['full']);
    expect(state.health()).toMatchObject({ status: 'full', failures: 30, error: 'database or disk is full' });
    expect(state.faulted()).toBe(true);
    expect(await gauge('full')).toBe(1);

    // A batch that still fits (the WAL reuses its space) does not end a full disk at once...
    state.applied();
    advance(1_000);
    expect(state.failed(full)).toBe(true);
    expect(state.faulted()).toBe(true);
    // ...3 s of applying without a failure does.
    state.applied();
    advance(3_000);
    state.applied();
    expect(state.faulted()).toBe(false);
    expect(state.health()).toEqual({ status: 'ok' });
    expect(await gauge('full')).toBe(0);
    const resumed = lines.filter(
      (l) => l.msg === 'applying resumed: the data directory accepts writes again',
    );
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ storage: 'full', failures: 31 });
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);
  });

  it('a different fault is a new line; an error that is not about storage is left to the caller', async () => {
    const { state, lines, gauge } = setup();
    expect(state.failed(busy)).toBe(false);
    expect(state.faulted()).toBe(false);
    state.failed(full);
    state.failed(readOnly);
    expect(state.health().status).toBe('read_only');
    expect(await gauge('read_only')).toBe(1);
    expect(await gauge('full')).toBe(0);
    expect(lines.filter((l) => l.level === 40).map((l) => l.storage)).toEqual(['full', 'read_only']);
  });
});
