/**
 * `pnpm --filter @pda/ingest run rebuild [--adopt-directory]` (`run`: plain `pnpm rebuild` is pnpm's own command for native dependencies): same INGEST_* environment as `start`.
 * Builds a new projection generation under a new consumer group until caught up, then swaps
 * INGEST_DATA_DIR (a symlink) to it. Prints the generation as one JSON line. Exit 2: bad config or
 * usage; 1: failed (the live generation is unchanged).
 *
 * `rebuild --company <uuid> [--admin http://host:port]`: rebuilds ONE company's file, performed by
 * the running ingest (its admin port: `--admin`, else INGEST_ADMIN_HOST/INGEST_ADMIN_PORT, default
 * 127.0.0.1:9464) while it keeps applying the others (src/live-rebuild/company-rebuild.ts). Sends the
 * admin token read from INGEST_ADMIN_TOKEN_FILE, the running ingest's file (admin-port/admin-server.ts).
 * Waits for the outcome and prints it as one JSON line; exit 1 when it failed (the company stays
 * out of service), 2 for a refusal (not a uuid, one already running, no or a wrong token).
 */

import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import type { AdminToken } from './admin-token.ts';
import { ConfigError, ConfigSchema, type IngestConfig, parseConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { RebuildError, rebuild } from './offline-rebuild/rebuild.ts';
import { loadAvscTypes } from './schema-types.ts';

const USAGE = 'usage: rebuild [--adopt-directory] | rebuild --company <uuid> [--admin http://host:port]';

/** The settings `rebuild --company` shares with the running ingest: where its admin port is, its token. */
const AdminSettings = ConfigSchema.pick({
  INGEST_ADMIN_HOST: true,
  INGEST_ADMIN_PORT: true,
  INGEST_ADMIN_TOKEN_FILE: true,
});

function adminSettings(): { url: string; token: AdminToken } {
  const parsed = AdminSettings.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new UsageError(`invalid ingest configuration: ${problems.join('; ')}`);
  }
  const { INGEST_ADMIN_HOST: host, INGEST_ADMIN_PORT: port, INGEST_ADMIN_TOKEN_FILE: token } = parsed.data;
  if (!token) {
    throw new UsageError(
      'rebuild --company needs INGEST_ADMIN_TOKEN_FILE: the admin token file the running ingest was started with',
    );
  }
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, token };
}

/** Asks the running ingest to rebuild one company, then follows GET /rebuild until it ends. */
async function rebuildOneCompany(companyId: string, admin: string, token: AdminToken): Promise<void> {
  const base = admin.replace(/\/+$/, '');
  // No body and no Content-Type: the port refuses both (a form could send them without asking).
  const headers = { authorization: token.authorization() };
  const started = await fetch(`${base}/rebuild?company=${encodeURIComponent(companyId)}`, {
    method: 'POST',
    headers,
  }).catch((error: unknown) => {
    throw new RebuildError(`cannot reach ingest's admin port at ${base}: ${(error as Error).message}`);
  });
  const answer = (await started.json().catch(() => ({}))) as { error?: string };
  if ([400, 401, 403, 409].includes(started.status))
    throw new UsageError(answer.error ?? `refused (${started.status})`);
  if (started.status !== 202)
    throw new RebuildError(`ingest answered ${started.status}: ${answer.error ?? ''}`);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const listed = (await (await fetch(`${base}/rebuild`, { headers })).json()) as {
      rebuilds: { companyId: string; status: string; result?: unknown; error?: string }[];
    };
    const mine = listed.rebuilds.filter((r) => r.companyId === companyId).at(-1);
    if (mine?.status === 'done') {
      process.stdout.write(`${JSON.stringify(mine.result)}\n`);
      return;
    }
    if (mine?.status === 'failed')
      throw new RebuildError(`company rebuild failed: ${mine.error ?? 'unknown'}`);
  }
}

await runCli(USAGE, async () => {
  const { values: args } = parseArgs({
    args: cliArgs(),
    strict: true,
    allowPositionals: false,
    options: {
      'adopt-directory': { type: 'boolean', default: false },
      company: { type: 'string' },
      admin: { type: 'string' },
    },
  });
  if (args.company !== undefined) {
    const settings = adminSettings();
    await rebuildOneCompany(args.company, args.admin ?? settings.url, settings.token);
    return;
  }
  if (args.admin !== undefined) throw new UsageError('--admin goes with --company');
  let config: IngestConfig;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    throw error instanceof ConfigError ? new UsageError(error.message) : error;
  }
  const logger = createLogger(config.logLevel, 'rebuild');
  const interrupted = new AbortController();
  process.once('SIGINT', () => interrupted.abort());
  process.once('SIGTERM', () => interrupted.abort());
  try {
    const result = await rebuild(config, {
      logger,
      avscTypes: await loadAvscTypes(logger),
      adoptPlainDirectory: args['adopt-directory'],
      signal: interrupted.signal,
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    // A refusal is its own one-line message; anything else is unexpected: log it whole first.
    if (!(error instanceof RebuildError)) logger.fatal({ err: error }, 'rebuild failed');
    throw error;
  }
});
// Kafka clients may keep the event loop alive after the swap: end with the code runCli set.
process.exit();
