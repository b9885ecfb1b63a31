import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Change } from '@pda/projections';
import { buildProjection, freePort, makeUpsert, sampleRow } from '@pda/projections/testing';
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
  child?.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

async function sitesOf(n: number): Promise<{ status: number; ids: string[] }> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/sites`, {
    headers: { authorization: `Bearer ${KEY}`, 'x-service-company': company(n) },
  });
  const body = (await response.json()) as { data?: { id: string }[] };
  return { status: response.status, ids: (body.data ?? []).map((r) => r.id) };
}

function metric(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
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
    expect(metric(text, 'pda_api_process_max_fds')).toBe(LIMIT);
    // Half of 96 kept for sockets and the rest, three descriptors per file.
    expect(metric(text, 'pda_api_open_company_files_max')).toBe(16);
    expect(metric(text, 'pda_api_open_company_files')).toBeLessThanOrEqual(16);
    expect(metric(text, 'pda_api_company_files_evicted_total')).toBeGreaterThan(0);
    expect(metric(text, 'pda_api_company_file_lookups_total{result="miss"}')).toBeGreaterThan(COMPANIES);
    expect(metric(text, 'pda_api_process_open_fds')).toBeLessThanOrEqual(LIMIT);
    expect(child.exitCode).toBeNull();
    expect(output).not.toContain('"level":50');
  });
});
