// `pnpm --filter @pda/operator-tools keys -- issue|revoke|rotate|list ...`: the vendor admin's key tool.
// The key is printed once, by issue and rotate, and nowhere else (not in logs, not by list).
import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import type pg from 'pg';
import { CONNECTION_OPTIONS, CONNECTION_USAGE, connectClient, resolveConnection } from '../pg/connection.ts';
import { printIssued, printList } from './cli-output.ts';
import { issueApiKey } from './issue.ts';
import { InvalidKeyRequest } from './key-errors.ts';
import { listApiKeys } from './list.ts';
import { revokeApiKey } from './revoke.ts';
import { DEFAULT_GRACE_MS, rotateApiKey } from './rotate.ts';
import { SCOPE_NAMES } from './scopes.ts';
import { parseDuration, parseInstant } from './validate.ts';

const USAGE = `usage: pnpm --filter @pda/operator-tools keys -- <command> [options]
  issue  --company <id> [--company <id2> ...] --name "..." --scopes a:read,b:read [--expires-at ISO] [--json]
  revoke --id <keyId> [--at ISO]              stop the key at --at (default now)
  rotate --id <keyId> [--grace 7d] [--expires-at ISO] [--json]
                                              new key, same companies and scopes; old one stops after --grace
  list   [--company <id>] [--json]            keys with their identifier (svc_pk_…abcd), never the key
scopes: ${SCOPE_NAMES.join(', ')}
ISO times need a zone (2026-01-31T00:00:00Z); durations: 90s, 30m, 12h, 7d, 2w, 0
${CONNECTION_USAGE}`;

const OPTIONS = {
  company: { type: 'string', multiple: true },
  name: { type: 'string' },
  scopes: { type: 'string' },
  'expires-at': { type: 'string' },
  id: { type: 'string' },
  at: { type: 'string' },
  grace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  ...CONNECTION_OPTIONS,
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const CONNECTION = Object.keys(CONNECTION_OPTIONS) as (keyof typeof CONNECTION_OPTIONS)[];
const ALLOWED: Record<string, readonly (keyof Values)[]> = {
  issue: ['company', 'name', 'scopes', 'expires-at', 'json', ...CONNECTION],
  revoke: ['id', 'at', 'json', ...CONNECTION],
  rotate: ['id', 'grace', 'expires-at', 'json', ...CONNECTION],
  list: ['company', 'json', ...CONNECTION],
};

function required(values: Values, name: 'name' | 'scopes' | 'id'): string {
  const value = values[name];
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [command, ...extra] = positionals;
  if (values.help) return { command: 'help', values } as const;
  if (command === undefined) throw new UsageError('a command is required: issue, revoke, rotate or list');
  const allowed = ALLOWED[command];
  if (!allowed) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const wrong = (Object.keys(values) as (keyof Values)[]).find((k) => !allowed.includes(k));
  if (wrong) throw new UsageError(`--${wrong} does not apply to ${command}`);
  return { command, values } as const;
}

async function run(client: pg.Client, command: string, values: Values): Promise<void> {
  const json = values.json ?? false;
  const expiresAt =
    values['expires-at'] === undefined ? undefined : parseInstant('--expires-at', values['expires-at']);
  switch (command) {
    case 'issue': {
      if (!values.company?.length) throw new UsageError('--company is required');
      const scopes = required(values, 'scopes')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const issued = await issueApiKey(client, {
        companyIds: values.company,
        name: required(values, 'name'),
        scopes,
        expiresAt: expiresAt ?? null,
      });
      printIssued(issued, json);
      return;
    }
    case 'revoke': {
      const at = values.at === undefined ? undefined : parseInstant('--at', values.at);
      const result = await revokeApiKey(client, { id: required(values, 'id'), ...(at ? { at } : {}) });
      process.stdout.write(
        json
          ? `${JSON.stringify(result)}\n`
          : `revoked ${result.id}: stops working at ${result.revokesAt.toISOString()}\n`,
      );
      return;
    }
    case 'rotate': {
      const graceMs = values.grace === undefined ? DEFAULT_GRACE_MS : parseDuration('--grace', values.grace);
      const result = await rotateApiKey(client, {
        id: required(values, 'id'),
        graceMs,
        ...(expiresAt ? { expiresAt } : {}),
      });
      printIssued(result.replacement, json, { oldId: result.oldId, oldRevokesAt: result.oldRevokesAt });
      return;
    }
    case 'list':
      printList(await listApiKeys(client, values.company?.[0] ? { companyId: values.company[0] } : {}), json);
      return;
  }
}

await runCli(USAGE, async () => {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(cliArgs());
    if (parsed.command === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
  } catch (error) {
    throw error instanceof InvalidKeyRequest ? new UsageError(error.message) : error;
  }
  const client = await connectClient(resolveConnection(parsed.values).config);
  try {
    await run(client, parsed.command, parsed.values);
  } catch (error) {
    // Malformed input found by the key functions (unknown scope, bad uuid or date) is a usage error.
    throw error instanceof InvalidKeyRequest ? new UsageError(error.message) : error;
  } finally {
    await client.end();
  }
});
