import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Change } from '@pda/projections/model';
import { buildProjection, freePort, makeUpsert, metricSample, sampleRow } from '@pda/projections/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, uuid } from './support/fixture.ts';
import { TEST_CURSOR_SECRET } from './support/test-app.ts';

// The api process under a low descriptor limit (`prlimit --nofile`), with requests spread over
// more companies than its cache can hold: every answer is right, none is a 500, the process stays
// up, and its metrics say it is evicting (docs/operations.md#sizing-a-node).
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const LIMIT = 96;
const COMPANIES = 40;
const KEY = `svc_pk_lowlimit${'x'.repeat(24)}0001`;

let dataDir: string;
let child: ChildProcess;
let output = '';
let port: number;
let adminPort: number;

const company = (n: number) => uuid(0x10, n);
const site = (n: number) => uuid(0x20, n);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-low-limit-'));
  let lsn = 1;
  const changes: Change[] = [];
  const keyId = uuid(0xe, 1);
  changes.push(
    makeUpsert(
      'api_keys',
      sampleRow('api_keys', {
        id: keyId,
        name: 'every company',
        prefix: 'svc_pk_',
        last_four: KEY.slice(-4),
        key_sha256: createHash('sha256').update(KEY).digest('hex'),
        scopes: [...ALL_SCOPES],
        expires_at: null,
        revokes_at: null,
      }),
      lsn++,
    ),
  );
  for (let n = 1; n <= COMPANIES; n++) {
    changes.push(makeUpsert('companies', sampleRow('companies', { id: company(n) }), lsn++));
    changes.push(makeUpsert('sites', sampleRow('sites', { id: site(n), company_id: company(n) }), lsn++));
    changes.push(
      makeUpsert(
        'api_key_companies',
        sampleRow('api_key_companies', { api_key_id: keyId, company_id: company(n) }),
        lsn++,
      ),
    );
  }
  buildProjection(dataDir, changes);

  port = await freePort();
  child = spawn('prlimit', [`--nofile=${LIMIT}:${LIMIT}`, process.execPath, main], {
    env: {
      PATH: process.env.PATH ?? '',
      API_DATA_DIR: dataDir,
      API_CURSOR_SECRET: TEST_CURSOR_SECRET,
      API_PORT: String(port),
      API_ADMIN_PORT: '0',
      // Far more than 96 descriptors can hold: cut to fit, and said so at start.
      API_MAX_OPEN_COMPANIES: '1000',
      API_RATE_LIMIT_MAX: '100000',
      API_BUILD_INFO_FILE: '/nonexistent/build-info.json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  adminPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`api did not start: ${output}`)), 20_000);
    const poll = setInterval(() => {
      const line = output.split('\n').find((l) => l.includes('admin server listening'));
      if (!line) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolve((JSON.parse(line) as { port: number }).port);
    }, 50);
    child.once('exit', () => reject(new Error(`api exited: ${output}`)));
  });
});

afterAll(() => {
  agent.destroy();
  child?.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

// At most four connections of the test's own, kept alive: the api under this limit accepts eight.
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function sitesOf(n: number): Promise<{ status: number; ids: string[] }> {
  return new Promise((resolve, reject) => {
    const request = get(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/sites',
        agent,
        headers: { authorization: `Bearer ${KEY}`, 'x-service-company': company(n) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => {
          const body = JSON.parse(text) as { data?: { id: string }[] };
          resolve({ status: response.statusCode ?? 0, ids: (body.data ?? []).map((r) => r.id) });
        });
      },
    );
    request.on('error', reject);
  });
}

describe(`the api with ${LIMIT} file descriptors and ${COMPANIES} companies`, () => {
  it('answers every company right while evicting, and says so in its log and metrics', async () => {
    expect(output).toContain('API_MAX_OPEN_COMPANIES needs more file descriptors than the limit allows');
    // Three passes over every company, six requests at a time.
    for (let pass = 0; pass < 3; pass++) {
      for (let first = 1; first <= COMPANIES; first += 6) {
        const batch = Array.from({ length: Math.min(6, COMPANIES - first + 1) }, (_, i) => first + i);
        const answers = await Promise.all(batch.map(sitesOf));
        answers.forEach((answer, i) => {
          expect(answer).toEqual({ status: 200, ids: [site(batch[i] as number)] });
        });
      }
    }
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    expect(metricSample(text, 'pda_api_process_max_fds')).toBe(LIMIT);
    // Half of 96 kept for sockets and the rest, three descriptors per file.
    expect(metricSample(text, 'pda_api_open_company_files_max')).toBe(16);
    expect(metricSample(text, 'pda_api_open_company_files')).toBeLessThanOrEqual(16);
    expect(metricSample(text, 'pda_api_company_files_evicted_total')).toBeGreaterThan(0);
    expect(metricSample(text, 'pda_api_company_file_lookups_total{result="miss"}')).toBeGreaterThan(
      COMPANIES,
    );
    expect(metricSample(text, 'pda_api_process_open_fds')).toBeLessThanOrEqual(LIMIT);
    expect(child.exitCode).toBeNull();
    expect(output).not.toContain('"level":50');
  });

  it('closes connections beyond its bound on arrival, counts them, and keeps answering', async () => {
    // 96 descriptors: a reserve of 48, of which 40 for the process itself, so 8 connections.
    expect(output).toMatch(/"maxConnections":8[,}]/);
    const sockets = await Promise.all(
      Array.from(
        { length: 60 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
            socket.on('error', () => resolve(socket));
          }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sitesOf(1)).toEqual({ status: 200, ids: [site(1)] });
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    expect(metricSample(text, 'pda_api_rate_limited_total{reason="too_many_connections"}')).toBeGreaterThan(
      0,
    );
    expect(child.exitCode).toBeNull();
  });
});

describe('a descriptor limit too low to run at all', () => {
  it('is refused at start: exit 2 and one line naming the limit', async () => {
    const refused = spawn('prlimit', ['--nofile=40:40', process.execPath, main], {
      env: { PATH: process.env.PATH ?? '', API_DATA_DIR: dataDir, API_CURSOR_SECRET: TEST_CURSOR_SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    refused.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^api: the open-file limit \(40\) is below the 96 the api needs at least; [^\n]*\n$/,
    );
  });
});
