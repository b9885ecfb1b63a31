// Fault campaign, a company file deleted or corrupted on disk while ingest and the api run
// (docs/operations.md, "A damaged company file"): under continuous writers, one company's file is
// deleted and another's overwritten with garbage. Each must be detected — the api answers 503
// problem+json for that company only (never 500, never the deleted file's rows), ingest logs one
// line naming the company, shows it in /readyz and pda_ingest_companies_out_of_service — while the
// other companies keep being applied and served. Each is then rebuilt with the documented command
// (`pnpm --filter @pda/ingest run rebuild --company <id>`, performed by the running ingest), after
// which the api serves it again and every company equals PostgreSQL.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildApp, parseConfig as parseApiConfig } from '@pda/api';
import { companyPath } from '@pda/projections/model';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { pause } from '../src/pause.ts';
import { type PrivateConnector, startPrivateConnector } from '../src/private-connector.ts';
import { issueKey } from '../src/read-side.ts';
import { kafkaClient, repoRoot, waitFor } from '../src/stack-env.ts';
import { settledComparison } from './support/compare.ts';
import {
  ADMIN_HEADERS,
  ADMIN_TOKEN_FILE,
  type IngestProcess,
  startIngest,
} from './support/ingest-process.ts';
import { caseRecord, longVariant, round, writeLog } from './support/result.ts';
import {
  committedChanges,
  createCompanies,
  faultTolerantPool,
  startContinuousWriter,
} from './support/writer.ts';

const run = promisify(execFile);
/** How long the damaged companies wait before their rebuild (the others are written meanwhile). */
const DAMAGED_MS = longVariant() ? 60_000 : 5_000;

interface Readyz {
  company_files: { out_of_service: { company_id: string; state: string; reason: string }[] };
}

describe('fault: a company file deleted or corrupted while ingest and the api run', () => {
  const pool = faultTolerantPool();
  const dataDir = mkdtempSync(join(tmpdir(), 'fault-damaged-file-'));
  let connector: PrivateConnector | undefined;
  let ingest: IngestProcess | undefined;
  let app: FastifyInstance | undefined;
  afterAll(async () => {
    await app?.close();
    if (ingest?.alive()) await ingest.kill9();
    await connector?.remove(kafkaClient('fault-damaged-cleanup'));
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'only the damaged companies stop, each is rebuilt by the running ingest and equals PostgreSQL',
    async () => {
      const record = caseRecord('damaged-company-file');
      connector = await startPrivateConnector('damaged', { 'snapshot.mode': 'no_data' });
      const [deleted, corrupted, other, bystander] = (await createCompanies(pool, 'damaged', 4, 20)) as [
        string,
        string,
        string,
        string,
      ];
      const keys = new Map<string, string>();
      for (const company of [deleted, corrupted, other, bystander]) {
        keys.set(company, await issueKey(pool, company, ['sites:read'], 'damaged-file e2e'));
      }
      ingest = startIngest({
        dataDir,
        groupId: `e2e-fault-damaged-${randomUUID()}`,
        env: { INGEST_TOPIC_PREFIX: connector.topicPrefix },
      });
      const port = await ingest.adminPort();
      // The companies out of service are named only to the admin token (ingest/README.md, admin port).
      const readyz = async () =>
        (await (await fetch(`http://127.0.0.1:${port}/readyz`, { headers: ADMIN_HEADERS })).json()) as Readyz;
      app = await buildApp(
        parseApiConfig({
          API_DATA_DIR: dataDir,
          API_CURSOR_SECRET: randomBytes(32).toString('hex'),
          API_PUBLIC_BASE_URL: 'http://damaged.test',
          API_RATE_LIMIT_MAX: '1000000',
        }),
        { logger: false },
      );
      const sites = async (company: string) => {
        const response = await (app as FastifyInstance).inject({
          url: '/v1/sites?limit=5',
          headers: { authorization: `Bearer ${keys.get(company)}` },
        });
        let body: unknown;
        try {
          body = response.json();
        } catch {
          body = undefined; // not JSON: bytes read from an overwritten file (counted below)
        }
        return { status: response.statusCode, type: String(response.headers['content-type']), body };
      };
      await ingest.caughtUpSeconds(120_000);
      await waitFor(
        'every company served',
        async () => {
          for (const company of keys.keys()) if ((await sites(company)).status !== 200) return false;
          return true;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );

      const writers = [
        startContinuousWriter(pool, { company: deleted, other }),
        startContinuousWriter(pool, { company: corrupted, other: bystander }),
      ];
      // Requests over the whole run: the healthy companies must never fail, the damaged never 500.
      const answers: { company: string; status: number; type: string; garbled: boolean }[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          for (const company of keys.keys()) {
            const { status, type, body } = await sites(company);
            answers.push({ company, status, type, garbled: body === undefined });
          }
          await pause(100);
        }
      })();
      const figures: Record<string, unknown>[] = [];
      let summaries: Awaited<ReturnType<(typeof writers)[number]['stop']>>[] = [];
      try {
        await pause(3_000);
        for (const [company, how] of [
          [deleted, 'deleted'],
          [corrupted, 'overwritten with random bytes'],
        ] as const) {
          const path = companyPath(dataDir, company);
          const damagedAt = Date.now();
          if (how === 'deleted') rmSync(path);
          else {
            const fd = openSync(path, 'r+');
            writeSync(fd, randomBytes(statSync(path).size));
            closeSync(fd);
          }
          const apiDetected = await waitFor(
            `the api answering 503 for the ${how} company`,
            async () => {
              const answer = await sites(company);
              return answer.status === 503 && answer;
            },
            { timeoutMs: 30_000, intervalMs: 50 },
          );
          const apiSeconds = (Date.now() - damagedAt) / 1000;
          await waitFor(
            `ingest reporting the ${how} company out of service`,
            async () => (await readyz()).company_files.out_of_service.some((f) => f.company_id === company),
            { timeoutMs: 30_000, intervalMs: 50 },
          );
          const ingestSeconds = (Date.now() - damagedAt) / 1000;
          expect(apiDetected.type).toContain('application/problem+json');
          expect(apiDetected.body).toMatchObject({ status: 503, code: 'service_unavailable' });
          expect(await ingest.metric('pda_ingest_companies_out_of_service', 'state="damaged"')).toBe(1);
          await pause(DAMAGED_MS);

          const rebuildStarted = Date.now();
          const { stdout } = await run(
            'pnpm',
            [
              '--filter',
              '@pda/ingest',
              'run',
              '--silent',
              'rebuild',
              '--company',
              company,
              '--admin',
              `http://127.0.0.1:${port}`,
            ],
            {
              cwd: repoRoot,
              env: { ...process.env, INGEST_ADMIN_TOKEN_FILE: ADMIN_TOKEN_FILE },
              timeout: 300_000,
            },
          );
          const rebuilt = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<string, unknown>;
          await waitFor(
            'the api serving the rebuilt company',
            async () => (await sites(company)).status === 200,
            {
              timeoutMs: 30_000,
              intervalMs: 50,
            },
          );
          figures.push({
            company,
            how,
            apiDetectSeconds: round(apiSeconds),
            ingestDetectSeconds: round(ingestSeconds),
            rebuildSeconds: round((Date.now() - rebuildStarted) / 1000),
            rebuild: rebuilt,
          });
          // The api serves the rebuilt file as soon as it is in place; ingest's readiness refreshes
          // its list of companies out of service with its next batch or heartbeat, a moment later.
          await waitFor(
            'ingest reporting every company in service again',
            async () => (await readyz()).company_files.out_of_service.length === 0,
            { timeoutMs: 30_000, intervalMs: 100 },
          );
          expect((await readyz()).company_files.out_of_service).toEqual([]);
        }
        await pause(2_000);
      } finally {
        summaries = await Promise.all(writers.map((w) => w.stop()));
        polling = false;
        await poller;
      }
      // Lag 0 once the writers' last changes are applied. Not "a batch applied after now": when
      // they were all applied before the writers stopped, no further batch comes (failed in CI).
      await ingest.caughtUpSeconds(120_000);
      const companies = [deleted, corrupted, other, bystander];
      const comparison = await settledComparison(pool, dataDir, companies, { timeoutMs: 90_000 });
      const damagedLines = ingest.lines.filter((l) => String(l.msg).startsWith('company file damaged'));
      writeLog(
        'damaged-company-file',
        'ingest-warnings',
        ingest.lines.filter((l) => Number(l.level) >= 40),
      );
      const healthyFailures = answers.filter(
        (a) => (a.company === other || a.company === bystander) && a.status !== 200,
      );
      const serverErrors = answers.filter((a) => a.status >= 500 && a.status !== 503);
      // SQLite has no page checksums: until the overwritten file is noticed (its header, checked
      // by the api at most every API_REOPEN_CHECK_MS), a page read from it may be served as text.
      const garbled = answers.filter((a) => a.garbled);
      const exitCode = await ingest.stop();

      const slowest = Math.max(...figures.map((f) => Number(f.rebuildSeconds)));
      record.set({
        fault: `one company's file deleted, another's overwritten with random bytes, while ingest and the api run under continuous writers; each rebuilt after ${DAMAGED_MS / 1000} s`,
        whatHappened: `each detected (api 503 problem+json in ${figures.map((f) => f.apiDetectSeconds).join(' / ')} s, ingest out of service + one log line in ${figures.map((f) => f.ingestDetectSeconds).join(' / ')} s); the other companies applied and served throughout (${healthyFailures.length} failed of ${answers.length - answers.filter((a) => a.company === deleted || a.company === corrupted).length} requests); rebuilt by the running ingest in ${figures.map((f) => f.rebuildSeconds).join(' / ')} s and served again`,
        recoverySeconds: slowest,
        differences: comparison.differences.length,
        failedRequests: healthyFailures.length,
        cases: figures,
        serverErrors: serverErrors.length,
        garbledAnswers: garbled.length,
        requests: answers.length,
        writers: summaries.map((s) => ({
          changes: committedChanges(s),
          abandoned: s.abandoned,
          failedSlices: s.failedSlices,
          firstSliceError: s.firstSliceError,
        })),
        sampleDifferences: comparison.differences.slice(0, 10),
      });
      expect(damagedLines.map((l) => l.companyId)).toEqual([deleted, corrupted]);
      expect(healthyFailures).toEqual([]);
      expect(serverErrors).toEqual([]);
      expect(garbled.every((a) => a.company === corrupted && a.status === 200)).toBe(true);
      expect(comparison.differences).toEqual([]);
      expect(comparison.rowsCompared).toBeGreaterThan(80);
      // The seed alone passes rowsCompared: each writer must have committed changes (PostgreSQL stays
      // up in this case, so no slice of either may fail).
      for (const s of summaries) {
        expect(committedChanges(s), 'changes a writer committed').toBeGreaterThan(20);
        expect(s.failedSlices, `writer slices that failed (first: ${s.firstSliceError})`).toBe(0);
      }
      expect(exitCode).toBe(0);
    },
    longVariant() ? 900_000 : 300_000,
  );
});
