/**
 * One api measurement of tenants/fanout.ts: the api in a child process (shared/api-processes.ts, optionally
 * under a launcher such as `prlimit --nofile=N:N`) on the data directory ingest just built,
 * `GET /v1/sites?limit=5` with a multi-company key, each request's X-Service-Company drawn from
 * the case's spread (shared/api-measure.ts: autocannon, warm-up, then the measured run); the api's
 * memory and descriptors at the end.
 */
import { join } from 'node:path';
import { freePort, seededRandom } from '@pda/projections/testing';
import { type Measurement, measure } from '../../shared/api-measure.ts';
import { answersHealth, benchApiEnv, type Server, startServer } from '../../shared/api-processes.ts';
import { repoRoot } from '../../shared/paths.ts';
import {
  type NofileLimit,
  nofileLimit,
  type ProcessStats,
  processStats,
} from '../../shared/process-stats.ts';
import { companyId, companyPicker, type Spread } from '../../shared/tenant-events.ts';

export const API_PATH = '/v1/sites?limit=5';

export interface ApiOptions {
  readonly dataDir: string;
  readonly key: string;
  readonly companies: number;
  readonly spread: Spread;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly launcher: readonly string[];
}

export interface ApiResult {
  readonly measurement: Measurement | null;
  readonly process: ProcessStats | null;
  readonly nofile: NofileLimit | null;
  /** Why there is no measurement (the api did not start, or died), or null. */
  readonly failure: string | null;
}

export async function runApi(options: ApiOptions): Promise<ApiResult> {
  const port = await freePort();
  let api: Server;
  try {
    api = await startServer(
      'api',
      join(repoRoot, 'api', 'src', 'main.ts'),
      port,
      benchApiEnv(options.dataDir, port),
      answersHealth,
      [],
      options.launcher,
    );
  } catch (error) {
    return {
      measurement: null,
      process: null,
      nofile: null,
      failure: (error as Error).message.slice(0, 500),
    };
  }
  try {
    const ids = Array.from({ length: options.companies }, (_, k) => companyId(k));
    // One request per company first, ten at a time: a long-running api holds every file it serves
    // open, and the measured run should say what it costs then, not how long a first open takes.
    await requestEachCompanyOnce(api.base, options.key, ids);
    const pick = companyPicker(options.spread, options.companies);
    // The same sequence of companies in every run of a case (autocannon's connections share it).
    const random = seededRandom(options.companies * 31 + (options.spread === 'zipf' ? 7 : 0));
    const measurement = await measure(
      `${options.companies} companies, ${options.spread}`,
      `${api.base}${API_PATH}`,
      { authorization: `Bearer ${options.key}` },
      {
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        warmupSeconds: options.warmupSeconds,
        setupRequest: (request) => {
          request.headers = { ...request.headers, 'x-service-company': ids[pick(random())] };
          return request;
        },
      },
    );
    let stats: Omit<ApiResult, 'measurement' | 'failure'> = { process: null, nofile: null };
    let failure: string | null = null;
    try {
      stats = { process: processStats(api.pid), nofile: nofileLimit(api.pid) };
    } catch {
      // A crash ends with a stack and Node's version: its error line says what happened.
      const lines = api
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '');
      const cause =
        lines.find((line) => /^\s*\[?\w*Error\b/.test(line)) ??
        lines.find((line) => /error|emfile|fatal/i.test(line) && !/^\s+at /.test(line));
      const said = (cause ?? lines.at(-1) ?? '').trim().slice(0, 300);
      failure = `the api process was gone at the end of the measurement${said ? `; it said: ${said}` : ''}`;
    }
    return { measurement, ...stats, failure };
  } finally {
    await api.stop();
  }
}

async function requestEachCompanyOnce(base: string, key: string, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 10) {
    await Promise.all(
      ids.slice(i, i + 10).map(async (id) => {
        const response = await fetch(`${base}${API_PATH}`, {
          headers: { authorization: `Bearer ${key}`, 'x-service-company': id, 'accept-encoding': 'identity' },
        });
        await response.arrayBuffer();
      }),
    );
  }
}
