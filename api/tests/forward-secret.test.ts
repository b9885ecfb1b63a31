import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { companyPartition } from '@pda/projections/model';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { ConfigError } from '../src/config.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testConfig } from './support/test-app.ts';

// The hop secret between split writers (docs/security.md, "Rotate the hop secret"): the secret
// file's first line is sent, every line (at most two) accepted, so a rotation restarts the nodes
// one at a time and no hop is refused on the way. And a node warns at start when it would send
// hops over plain http to another machine.

const OLD = 'old-forward-secret-0123456789abcdef-0123456789';
const NEW = 'new-forward-secret-0123456789abcdef-0123456789';

let f: Fixture;
let work: string;
let partitions: number;
let yPort: number;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** x serves A, y serves B, with these api URLs. */
function ownershipFile(name: string, xApi: string, yApi: string): string {
  const a = companyPartition(COMPANY.A, partitions);
  const all = Array.from({ length: partitions }, (_, p) => p);
  const file = join(work, name);
  writeFileSync(
    file,
    JSON.stringify({
      partitions,
      writers: [
        { name: 'x', api: xApi, serves: all.filter((p) => p === a) },
        { name: 'y', api: yApi, serves: all.filter((p) => p !== a) },
      ],
    }),
  );
  return file;
}

function secretFile(name: string, text: string): string {
  const file = join(work, name);
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

function env(ownership: string, writer: 'x' | 'y', secrets: string): Record<string, string> {
  return {
    API_OWNERSHIP_FILE: ownership,
    API_WRITER_NAME: writer,
    API_FORWARD_SECRET_FILE: secrets,
    API_RATE_LIMIT_MAX: '1000',
  };
}

beforeAll(async () => {
  f = createFixture();
  work = mkdtempSync(join(tmpdir(), 'pda-api-forward-secret-'));
  partitions = 2;
  while (companyPartition(COMPANY.A, partitions) === companyPartition(COMPANY.B, partitions)) partitions += 1;
  yPort = await freePort();
});
afterAll(() => {
  f.cleanup();
  rmSync(work, { recursive: true, force: true });
});

describe('rotating the hop secret', () => {
  /** B's sites asked on x (forwarded to y), with x and y holding these secret files. */
  async function hop(xSecrets: string, ySecrets: string): Promise<number> {
    const ownership = ownershipFile('ownership.json', 'http://127.0.0.1:1', `http://127.0.0.1:${yPort}`);
    // Both nodes read the same data directory: the ownership file alone decides who answers B.
    const y = await buildApp(testConfig(f.dataDir, env(ownership, 'y', secretFile('y', ySecrets))), {
      logger: false,
    });
    const x = await buildApp(testConfig(f.dataDir, env(ownership, 'x', secretFile('x', xSecrets))), {
      logger: false,
    });
    try {
      await y.listen({ host: '127.0.0.1', port: yPort });
      const answer = await x.inject({ url: '/v1/sites?limit=1', headers: bearer(f.keys.b) });
      return answer.statusCode;
    } finally {
      await x.close();
      await y.close();
    }
  }

  test('three rolls, each node restarted alone: every hop on the way is served', async () => {
    // Start: both on OLD. Roll 1: accept NEW too, still send OLD.
    expect(await hop(`${OLD}\n`, `${OLD}\n`)).toBe(200);
    expect(await hop(`${OLD}\n${NEW}\n`, `${OLD}\n`)).toBe(200);
    expect(await hop(`${OLD}\n`, `${OLD}\n${NEW}\n`)).toBe(200);
    // Roll 2: send NEW, still accept OLD (a node not restarted yet still sends OLD).
    expect(await hop(`${NEW}\n${OLD}\n`, `${OLD}\n${NEW}\n`)).toBe(200);
    expect(await hop(`${OLD}\n${NEW}\n`, `${NEW}\n${OLD}\n`)).toBe(200);
    // Roll 3: NEW alone.
    expect(await hop(`${NEW}\n`, `${NEW}\n${OLD}\n`)).toBe(200);
    expect(await hop(`${NEW}\n${OLD}\n`, `${NEW}\n`)).toBe(200);
    expect(await hop(`${NEW}`, `${NEW}\r\n`)).toBe(200);
  });

  test('a secret the owner does not hold is refused: why the rolls accept both first', async () => {
    expect(await hop(`${NEW}\n`, `${OLD}\n`)).toBe(401);
    // The second line is accepted, never sent.
    expect(await hop(`${OLD}\n${NEW}\n`, `${NEW}\n`)).toBe(401);
  });

  test('the file is refused at start with more than two lines, or a short or blank line', () => {
    const ownership = ownershipFile('ownership.json', 'http://127.0.0.1:1', `http://127.0.0.1:${yPort}`);
    for (const [text, message] of [
      [`${OLD}\n${NEW}\n${OLD}x\n`, /3 lines: one secret, or two during a rotation/],
      [`${OLD}\nshort\n`, /at least 32 bytes/],
      [`${OLD}\n\n${NEW}\n`, /3 lines/],
      [`\n${OLD}\n`, /at least 32 bytes/],
    ] as const) {
      const config = () => testConfig(f.dataDir, env(ownership, 'x', secretFile('bad', text)));
      expect(config).toThrow(ConfigError);
      expect(config).toThrow(message);
    }
    const config = testConfig(f.dataDir, env(ownership, 'x', secretFile('two', `${NEW}\n${OLD}\n`)));
    expect(config.forwarding?.secret).toBe(NEW);
    expect(config.forwarding?.acceptedSecrets).toEqual([NEW, OLD]);
  });
});

describe('owners on plain http', () => {
  async function startLines(
    yApi: string,
    xApi = 'https://x.internal.example',
  ): Promise<Record<string, unknown>[]> {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    const ownership = ownershipFile('ownership-http.json', xApi, yApi);
    const app: FastifyInstance = await buildApp(
      testConfig(f.dataDir, env(ownership, 'x', secretFile('s', `${OLD}\n`))),
      { loggerInstance: pino({ level: 'info' }, sink) },
    );
    await app.ready();
    await app.close();
    return lines.filter((line) => line.level === 40);
  }

  test('another machine over http: one warning line at start, naming the writer', async () => {
    const warnings = await startLines('http://10.0.0.2:3000');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/plain http on another machine/);
    expect(warnings[0]?.writers).toEqual([{ name: 'y', api: 'http://10.0.0.2:3000' }]);
  });

  test.each([
    'https://y.internal.example',
    'http://127.0.0.1:3000',
    'http://127.8.9.10:3000',
    'http://localhost:3000',
    'http://[::1]:3000',
  ])('%s: no warning', async (yApi) => {
    expect(await startLines(yApi)).toEqual([]);
  });

  test('its own url is not judged: this node never sends a hop to itself', async () => {
    expect(await startLines('https://y.internal.example', 'http://10.0.0.1:3000')).toEqual([]);
  });
});
