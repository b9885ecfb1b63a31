import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RunningApi, startApi } from './support/api-server.ts';

// Every example of docs/partners.md, run against a real api (in-process, on a loopback port): each
// fenced `sh example=<name>` block is run by bash with the base URL, the key and the last run's
// start in PDA_* variables, and checked below; the `json` block right after one is a sample of its
// output and must match it (`…` elides the rest of a string), and a `text` block right after one is
// a sample of its NDJSON output, line by line (a last line `…`: more lines may follow); each
// `ts example=<name>` block must be client/examples/<name>.ts byte for byte, and that program is
// run with node around changes (the EventSource one until it has reconnected).

const run = promisify(execFile);
const GUIDE = fileURLToPath(new URL('../../docs/partners.md', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
// The guide's example origin, replaced by the test api's in output samples.
const DOC_ORIGIN = 'https://api.example.com';

interface Block {
  readonly lang: string;
  readonly name: string | undefined;
  readonly body: string;
  /** The `json` block that follows a shell example: a sample of its output. */
  sample?: unknown;
  /** The `text` block that follows a shell example: a sample of its NDJSON lines. */
  lines?: string[];
}

function guideBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const match of readFileSync(GUIDE, 'utf8').matchAll(
    /^```(\w+)(?: example=([\w-]+))?\n([\s\S]*?)^```$/gm,
  )) {
    const [, lang = '', name, body = ''] = match;
    const previous = blocks.at(-1);
    const sampled = previous?.sample !== undefined || previous?.lines !== undefined;
    if (lang === 'json' && previous?.lang === 'sh' && !sampled) {
      previous.sample = JSON.parse(body);
    } else if (lang === 'text' && previous?.lang === 'sh' && !sampled) {
      previous.lines = body.split('\n').filter((line) => line !== '');
    } else blocks.push({ lang, name, body });
  }
  return blocks;
}

/** `actual` has every member `sample` shows; a string with `…` is matched up to it. */
function expectMatchesSample(actual: unknown, sample: unknown, baseUrl: string, path = '$'): void {
  if (typeof sample === 'string') {
    const [prefix = '', ...elided] = sample.replaceAll(DOC_ORIGIN, baseUrl).split('…');
    expect(typeof actual, path).toBe('string');
    if (elided.length > 0) expect((actual as string).startsWith(prefix), `${path}: ${actual}`).toBe(true);
    else expect(actual, path).toBe(prefix);
  } else if (Array.isArray(sample)) {
    expect(Array.isArray(actual), path).toBe(true);
    sample.forEach((item, i) => {
      expectMatchesSample((actual as unknown[])[i], item, baseUrl, `${path}[${i}]`);
    });
  } else if (typeof sample === 'object' && sample !== null) {
    expect(typeof actual, path).toBe('object');
    for (const [key, value] of Object.entries(sample)) {
      expectMatchesSample((actual as Record<string, unknown>)[key], value, baseUrl, `${path}.${key}`);
    }
  } else expect(actual, path).toEqual(sample);
}

/** The lines of `stdout` match the sample's, one for one; a last sample line `…` lets more follow. */
function expectMatchesLines(stdout: string, sample: readonly string[], baseUrl: string): void {
  const actual = stdout.split('\n').filter((line) => line !== '');
  const open = sample.at(-1) === '…';
  const shown = open ? sample.slice(0, -1) : sample;
  if (open) expect(actual.length, stdout).toBeGreaterThanOrEqual(shown.length);
  else expect(actual.length, stdout).toBe(shown.length);
  shown.forEach((line, i) => {
    expectMatchesSample(JSON.parse(actual[i] ?? 'null'), JSON.parse(line), baseUrl, `line ${i + 1}`);
  });
}

let f: Fixture;
let api: RunningApi;
let stateDir: string;
let lastRunStart: string;
/** links.sync of a walk of sites done before the test's changes, and its first page's ETag after them. */
let syncUrl: string;
let etag: string;
/** links.next of a walk of the change feed caught up after the test's changes. */
let changesPosition: string;
let firstRun: { stdout: string };
let firstFollow: { stdout: string };
let firstStream: { stdout: string };

const json = (stdout: string) => JSON.parse(stdout);
const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  PDA_BASE_URL: api.baseUrl,
  PDA_API_KEY: f.keys.a,
  PDA_LAST_RUN_START: lastRunStart,
  PDA_SYNC_URL: syncUrl,
  PDA_CHANGES_POSITION: changesPosition,
  PDA_ETAG: etag,
  ...extra,
});
const runProgram = () =>
  run(process.execPath, [join(EXAMPLES, 'sync-to-file.ts')], {
    env: env({ PDA_STATE_FILE: join(stateDir, 'copy.json') }),
  });

/** The shell examples: extra environment, and what their output must show. */
const SHELL: Record<string, { env?: () => Record<string, string>; check: (stdout: string) => void }> = {
  me: { check: (out) => expect(json(out).data.company.id).toBe(COMPANY.A) },
  company: {
    env: () => ({ PDA_API_KEY: f.keys.multi, PDA_COMPANY_ID: COMPANY.B }),
    check: (out) => expect(json(out).data.company.id).toBe(COMPANY.B),
  },
  'first-page': { check: (out) => expect(json(out).data).toHaveLength(1) },
  'last-page': { check: (out) => expect(json(out).links.sync).toContain('sync=') },
  'sync-token': {
    check: (out) =>
      expect(json(out).data.map((s: { name: string }) => s.name)).toEqual(['renamed by the test']),
  },
  poll: {
    check: (out) => {
      expect(out).toMatch(/^HTTP\/1\.1 304/);
      expect(out).toMatch(new RegExp(`^etag: ${etag.replace(/[/"]/g, '\\$&')}`, 'im'));
      expect(out).toMatch(/^ratelimit-remaining: \d+/im);
    },
  },
  'updated-since': {
    check: (out) =>
      expect(json(out).data.map((s: { name: string }) => s.name)).toEqual(['renamed by the test']),
  },
  deletions: {
    check: (out) =>
      expect(json(out).data).toEqual([
        { type: 'sites', id: f.ids.A.sites[0], deleted_at: expect.any(String) },
      ]),
  },
  'window-expired': {
    check: (out) => expect(json(out)).toMatchObject({ status: 410, code: 'sync_window_expired' }),
  },
  'rate-limit-headers': {
    check: (out) => {
      for (const name of ['limit', 'remaining', 'reset'])
        expect(out).toMatch(new RegExp(`^ratelimit-${name}: \\d+`, 'im'));
    },
  },
  // From the start: the site the test kept, then the one it deleted (the renamed one is next).
  changes: {
    check: (out) =>
      expect(
        json(out).data.map((c: { op: string; id: string; data?: { id: string } }) => [
          c.op,
          c.id,
          c.data?.id,
        ]),
      ).toEqual([
        ['upsert', f.ids.A.sites[2], f.ids.A.sites[2]],
        ['delete', f.ids.A.sites[0], undefined],
      ]),
  },
  'changes-wait': {
    check: (out) => {
      expect(json(out).data).toEqual([]);
      // The same position, and the link carries the wait asked for, once ("follow it as is").
      const cursor = (url: string) => new URL(url).searchParams.get('cursor');
      expect(cursor(json(out).links.next)).toBe(cursor(changesPosition));
      expect(new URL(json(out).links.next).searchParams.getAll('wait')).toEqual(['1']);
    },
  },
  // The whole walk of sites in one response, ending caught up.
  'changes-stream': {
    check: (out) => {
      const lines = ndjson(out);
      expect(lines.map((l) => [l.op, l.id])).toEqual([
        ['upsert', f.ids.A.sites[2]],
        ['delete', f.ids.A.sites[0]],
        ['upsert', f.ids.A.sites[1]],
        ['position', undefined],
      ]);
      expect(lines.at(-1)?.caught_up).toBe(true);
    },
  },
  // Caught up at once, heartbeats while nothing changes, and a last position at the lifetime.
  'changes-live': {
    check: (out) => {
      const lines = ndjson(out);
      expect(lines.at(0)).toMatchObject({ op: 'position', caught_up: true });
      expect(lines.at(-1)).toMatchObject({ op: 'position', caught_up: true });
      const between = lines.slice(1, -1).map((l) => l.op);
      expect(between.length).toBeGreaterThan(0);
      expect(new Set(between)).toEqual(new Set(['heartbeat']));
    },
  },
};
const PROGRAMS = ['follow-to-file', 'stream-to-file', 'event-source', 'sync-to-file'];
const ndjson = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { op: string; id?: string; caught_up?: boolean });

beforeAll(async () => {
  f = createFixture();
  stateDir = mkdtempSync(join(tmpdir(), 'pda-partners-guide-'));
  // No overlap here: a company file vouches for its deletions only since its creation (a moment
  // ago), and the overlap is proven by the sync tests, not by the guide's examples.
  // Streams end after 2 s (the live example), with a heartbeat every second.
  api = await startApi(f.dataDir, {
    env: { API_UPDATED_SINCE_OVERLAP_MS: '0', API_STREAM_MAX_LIFETIME_S: '2', API_STREAM_HEARTBEAT_S: '1' },
  });
  firstRun = await runProgram(); // the full export
  firstFollow = await runFollower(); // from the start of the feed
  firstStream = await runStreamer(); // the feed from its start, in one stream
  lastRunStart = new Date().toISOString();
  const headers = { authorization: `Bearer ${f.keys.a}` };
  const walked = (await (await fetch(`${api.baseUrl}/v1/sites?limit=200`, { headers })).json()) as {
    links: { sync: string };
  };
  syncUrl = walked.links.sync;
  await new Promise((resolve) => setTimeout(resolve, 5));
  const store = ProjectionStore.open({ dataDir: f.dataDir });
  const A = f.ids.A;
  store.applyBatch([
    makeDelete('sites', { id: A.sites[0]! }, 10_000),
    makeUpsert(
      'sites',
      sampleRow('sites', { id: A.sites[1]!, company_id: COMPANY.A, name: 'renamed by the test' }),
      10_001,
      {
        op: 'u',
      },
    ),
  ]);
  store.close();
  etag = (await fetch(syncUrl, { headers })).headers.get('etag') ?? '';
  let changes = `${api.baseUrl}/v1/changes?limit=200`;
  for (;;) {
    const page = (await (await fetch(changes, { headers })).json()) as {
      meta: { page: { has_more: boolean } };
      links: { next: string };
    };
    changes = page.links.next;
    if (!page.meta.page.has_more) break;
  }
  changesPosition = changes;
});
afterAll(async () => {
  await api.close();
  f.cleanup();
  rmSync(stateDir, { recursive: true, force: true });
});

const runFollower = () =>
  run(process.execPath, [join(EXAMPLES, 'follow-to-file.ts')], {
    env: env({ PDA_STATE_FILE: join(stateDir, 'feed.json') }),
  });
const runStreamer = () =>
  run(process.execPath, [join(EXAMPLES, 'stream-to-file.ts')], {
    env: env({ PDA_STATE_FILE: join(stateDir, 'stream.json') }),
  });

describe('docs/partners.md', () => {
  const blocks = guideBlocks();

  test('every shell and TypeScript example is named and run here; every output sample follows one', () => {
    const named = blocks.filter((b) => b.lang === 'sh' || b.lang === 'ts');
    expect(named.filter((b) => b.name === undefined).map((b) => b.body)).toEqual([]);
    expect(named.filter((b) => b.lang === 'sh').map((b) => b.name)).toEqual(Object.keys(SHELL));
    expect(named.filter((b) => b.lang === 'ts').map((b) => b.name)).toEqual(PROGRAMS);
    expect(blocks.filter((b) => b.lang === 'json' || b.lang === 'text')).toEqual([]);
  });

  for (const block of blocks.filter((b) => b.lang === 'sh')) {
    test(`shell example ${block.name}`, async () => {
      const example = SHELL[block.name ?? ''];
      if (example === undefined) throw new Error(`no check for the example ${block.name}`);
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block.body], {
        env: env(example.env?.()),
      });
      example.check(stdout);
      if (block.sample !== undefined) expectMatchesSample(json(stdout), block.sample, api.baseUrl);
      if (block.lines !== undefined) expectMatchesLines(stdout, block.lines, api.baseUrl);
    });
  }

  test('the program is client/examples/sync-to-file.ts verbatim; run again, it applies the changes', async () => {
    const block = blocks.find((b) => b.name === 'sync-to-file');
    expect(block?.body).toBe(readFileSync(join(EXAMPLES, 'sync-to-file.ts'), 'utf8'));
    expect(firstRun.stdout).toBe(
      '0 changes applied; the copy holds 3 sites, 2 services, 3 equipment, 2 equipment-categories, 2 consumables\n',
    );
    const second = await runProgram();
    expect(second.stdout).toBe(
      '2 changes applied; the copy holds 2 sites, 2 services, 3 equipment, 2 equipment-categories, 2 consumables\n',
    );
    const state = JSON.parse(readFileSync(join(stateDir, 'copy.json'), 'utf8'));
    const A = f.ids.A;
    expect(Object.keys(state.records.sites).sort()).toEqual([A.sites[1], A.sites[2]]);
    expect(state.records.sites[A.sites[1]!]).toMatchObject({
      name: 'renamed by the test',
      contacts: expect.any(Array),
    });
    // The tokens of the next run, one pair per resource, changed by the run that saw changes.
    expect(Object.keys(state.tokens).sort()).toEqual([
      'consumables',
      'equipment',
      'equipment-categories',
      'services',
      'sites',
    ]);
    expect(state.tokens.sites).toEqual({ records: expect.any(String), deletions: expect.any(String) });
  });
  test('the follower is client/examples/follow-to-file.ts verbatim; run again, it applies the changes', async () => {
    const block = blocks.find((b) => b.name === 'follow-to-file');
    expect(block?.body).toBe(readFileSync(join(EXAMPLES, 'follow-to-file.ts'), 'utf8'));
    expect(firstFollow.stdout).toBe(
      '0 changes applied; the copy holds 2 consumables, 3 equipment, 2 equipment-categories, 2 services, 3 sites\n',
    );
    const second = await runFollower();
    expect(second.stdout).toBe(
      '2 changes applied; the copy holds 2 consumables, 3 equipment, 2 equipment-categories, 2 services, 2 sites\n',
    );
    const state = JSON.parse(readFileSync(join(stateDir, 'feed.json'), 'utf8'));
    const A = f.ids.A;
    expect(Object.keys(state.records.sites).sort()).toEqual([A.sites[1], A.sites[2]]);
    expect(state.records.sites[A.sites[1]!]).toMatchObject({
      name: 'renamed by the test',
      contacts: expect.any(Array),
    });
    expect(state.position).toContain('/v1/changes?');
    // Caught up: a third run applies nothing.
    expect((await runFollower()).stdout).toMatch(/^0 changes applied/);
  });
  test('the streamer is client/examples/stream-to-file.ts verbatim; run again, it applies the changes', async () => {
    const block = blocks.find((b) => b.name === 'stream-to-file');
    expect(block?.body).toBe(readFileSync(join(EXAMPLES, 'stream-to-file.ts'), 'utf8'));
    expect(firstStream.stdout).toBe(
      '0 changes applied; the copy holds 2 consumables, 3 equipment, 2 equipment-categories, 2 services, 3 sites\n',
    );
    const second = await runStreamer();
    expect(second.stdout).toBe(
      '2 changes applied; the copy holds 2 consumables, 3 equipment, 2 equipment-categories, 2 services, 2 sites\n',
    );
    const state = JSON.parse(readFileSync(join(stateDir, 'stream.json'), 'utf8'));
    const A = f.ids.A;
    expect(Object.keys(state.records.sites).sort()).toEqual([A.sites[1], A.sites[2]]);
    expect(state.records.sites[A.sites[1]!]).toMatchObject({
      name: 'renamed by the test',
      contacts: expect.any(Array),
    });
    expect(state.position).toContain('/v1/changes?');
    expect((await runStreamer()).stdout).toMatch(/^0 changes applied/);
  });
  // Last: it commits a change of its own once the EventSource has reconnected.
  test('the EventSource is client/examples/event-source.ts verbatim; it reconnects with Last-Event-ID and goes on without repeats', async () => {
    const block = blocks.find((b) => b.name === 'event-source');
    expect(block?.body).toBe(readFileSync(join(EXAMPLES, 'event-source.ts'), 'utf8'));
    const child = spawn(process.execPath, [join(EXAMPLES, 'event-source.ts')], {
      env: env(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
    });
    const lines = () => out.split('\n').filter((line) => line !== '');
    const until = async (condition: () => boolean, what: string) => {
      for (let i = 0; i < 600 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(condition(), `${what}:\n${out}`).toBe(true);
    };
    const A = f.ids.A;
    try {
      // The stream ends at its lifetime (2 s); the EventSource reconnects 3 s later by itself.
      await until(() => lines().filter((line) => line === 'connected').length >= 2, 'reconnected');
      const store = ProjectionStore.open({ dataDir: f.dataDir });
      store.applyBatch([
        makeUpsert(
          'sites',
          sampleRow('sites', { id: A.sites[2]!, company_id: COMPANY.A, name: 'after the reconnect' }),
          10_002,
          { op: 'u' },
        ),
      ]);
      store.close();
      await until(() => lines().filter((line) => line.startsWith('upsert')).length >= 3, 'the new change');
    } finally {
      child.kill();
    }
    // Resumed after the last position (Last-Event-ID), not from the URL's start: nothing again.
    expect(lines().filter((line) => line !== 'connected' && !line.startsWith('position'))).toEqual([
      `upsert sites/${A.sites[2]}`,
      `delete sites/${A.sites[0]}`,
      `upsert sites/${A.sites[1]}`,
      `upsert sites/${A.sites[2]}`,
    ]);
  });
});
