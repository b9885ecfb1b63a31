import type { ClientConfig } from 'pg';

// The operational PostgreSQL is reached through the shared PDA_PG_* names (operator-tools/README.md);
// `dev-world/stack/stack.sh up` writes them to .stack/env. Host, port, database and user default to the
// native stack's; the password has no default (unset: node-postgres' PGPASSWORD). The CLIs resolve
// their connection with ./connection.ts, which also takes a URL and TLS settings.
export function pgConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const port = Number(env.PDA_PG_PORT ?? '55432');
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(`PDA_PG_PORT must be a TCP port, got ${JSON.stringify(env.PDA_PG_PORT)}`);
  }
  return {
    host: env.PDA_PG_HOST ?? '127.0.0.1',
    port,
    database: env.PDA_PG_DATABASE ?? 'pda',
    user: env.PDA_PG_USER ?? 'pda',
    ...(env.PDA_PG_PASSWORD === undefined ? {} : { password: env.PDA_PG_PASSWORD }),
    application_name: 'pda-ops',
  };
}
