// `pnpm -s reconcile [--company <uuid>]... [--data-dir <dir>] [--json] [--pg-url <url>] [--wait-s N]`:
// compares the projection with the operational PostgreSQL (reconcile.ts). Exit 0: no difference;
// 1: differences, or rows left unsettled because the projection did not catch up; 2: bad usage,
// PostgreSQL unreachable, a projection file missing or unreadable (one `error:` line on stderr).
import { parseArgs } from 'node:util';
import { userPath } from '@pda/projections/cli';
import type pg from 'pg';
import { readStackEnv } from '../local-stack/stack-env.ts';
import { pgConfigFromEnv } from '../pg/pg-config.ts';
import { formatReport, progressPrinter } from './output.ts';
import { DEFAULT_WAIT_MS, reconcile } from './reconcile.ts';

const USAGE = `usage: pnpm -s reconcile [--company <uuid>]... [--data-dir <dir>] [--json] [--pg-url <url>] [--wait-s N]
  compares every captured row in PostgreSQL with its projection (every column, the stored export
  document) and lists missing, extra and different rows
  --company <uuid>   a company to check (repeatable); default: every company in PostgreSQL or the data dir
  --data-dir <dir>   the projection's data directory; default: INGEST_DATA_DIR
  --pg-url <url>     postgres://user:password@host:port/db; default: PDA_PG_HOST, PDA_PG_PORT,
                     PDA_PG_DATABASE, PDA_PG_USER, PDA_PG_PASSWORD (environment, else the stack's env file)
  --wait-s N         at most N seconds for rows that differ to settle (in flight); default ${DEFAULT_WAIT_MS / 1000}
  --json             the report as JSON on stdout (progress stays on stderr)
exit: 0 no difference, 1 differences or not caught up, 2 usage, connection or unreadable file`;

class UsageError extends Error {}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      company: { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      'pg-url': { type: 'string' },
      'wait-s': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) return undefined;
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const dataDir = values['data-dir'] ?? process.env.INGEST_DATA_DIR;
  if (!dataDir) throw new UsageError('--data-dir (or INGEST_DATA_DIR) is required');
  const wait = values['wait-s'] ?? String(DEFAULT_WAIT_MS / 1000);
  if (!/^\d{1,6}$/.test(wait))
    throw new UsageError(`--wait-s must be a whole number of seconds, got ${JSON.stringify(wait)}`);
  const pgConfig: pg.ClientConfig = values['pg-url']
    ? { connectionString: values['pg-url'] }
    : // The environment wins over the stack's file: an operator's explicit setting.
      pgConfigFromEnv({ ...readStackEnv(), ...process.env });
  return {
    dataDir: userPath(dataDir),
    companies: values.company,
    json: values.json ?? false,
    waitMs: Number(wait) * 1000,
    pgConfig,
  };
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return `cannot reach PostgreSQL (${error.message})`;
    return error.message.split('\n')[0] ?? String(error);
  }
  return String(error);
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(process.argv.slice(2)[0] === '--' ? process.argv.slice(3) : process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`error: ${describe(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (!args) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const report = await reconcile({
      pg: args.pgConfig,
      dataDir: args.dataDir,
      ...(args.companies ? { companies: args.companies } : {}),
      waitMs: args.waitMs,
      onProgress: progressPrinter((line) => process.stderr.write(`${line}\n`)),
    });
    process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    return report.ok ? 0 : 1;
  } catch (error) {
    process.stderr.write(`error: ${describe(error)}\n`);
    return 2;
  }
}

process.exitCode = await main();
