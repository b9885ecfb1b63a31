// Where the operator tools' CLIs (keys, seed) connect, first match wins (operator-tools/README.md, "Connecting"):
//   1. --database-url, else PDA_DATABASE_URL: postgres://user[:password]@host:port/db?sslmode=…;
//   2. PDA_PG_HOST / _PORT / _DATABASE / _USER / _PASSWORD (/ _SSLMODE / _SSLROOTCERT), when any of
//      the first five is set;
//   3. the native stack's env file (<stack dir>/env), which holds the demo's credentials;
//   otherwise the CLI refuses: there is no default password.
// --sslmode and --sslrootcert override the TLS settings of whichever applies (./tls.ts).
// --database-url may not hold a password: a command line is readable by every user of the machine
// (`ps`). Without one in the URL, the password is PDA_PG_PASSWORD, else node-postgres' PGPASSWORD.
import { SettingsError } from '@pda/projections/cli';
import pg from 'pg';
import { readStackEnv, stackEnvFile } from '../local-stack/stack-env.ts';
import { parseDatabaseUrl } from './database-url.ts';
import { type TlsSettings, tlsOptions } from './tls.ts';

/** parseArgs options of the connection, shared by the CLIs. */
export const CONNECTION_OPTIONS = {
  'database-url': { type: 'string' },
  sslmode: { type: 'string' },
  sslrootcert: { type: 'string' },
} as const;

export const CONNECTION_USAGE = `connection (first that applies; there is no default password):
  --database-url postgres://user@host:port/db?sslmode=verify-full&sslrootcert=ca.pem   no password in it:
                 a command line is visible in ps; the password from PDA_PG_PASSWORD or PGPASSWORD
  PDA_DATABASE_URL  the same URL, a password allowed
  PDA_PG_HOST, PDA_PG_PORT, PDA_PG_DATABASE, PDA_PG_USER, PDA_PG_PASSWORD, PDA_PG_SSLMODE, PDA_PG_SSLROOTCERT
  the native stack's env file (.stack/env, or $PDA_STACK_DIR/env): the demo's credentials
  --sslmode disable|require|verify-ca|verify-full, --sslrootcert <file>   override the TLS settings`;

export interface ConnectionFlags {
  'database-url'?: string | undefined;
  sslmode?: string | undefined;
  sslrootcert?: string | undefined;
}

export interface ResolvedConnection {
  config: pg.ClientConfig;
  /** Where the settings came from, for messages (never the settings themselves). */
  from: string;
}

const PG_SETTINGS = [
  'PDA_PG_HOST',
  'PDA_PG_PORT',
  'PDA_PG_DATABASE',
  'PDA_PG_USER',
  'PDA_PG_PASSWORD',
] as const;

function flagTls(flags: ConnectionFlags): TlsSettings {
  return {
    ...(flags.sslmode === undefined ? {} : { sslmode: flags.sslmode }),
    ...(flags.sslrootcert === undefined ? {} : { sslrootcert: flags.sslrootcert }),
  };
}

function fromUrl(text: string, flags: ConnectionFlags, env: NodeJS.ProcessEnv): pg.ClientConfig {
  const url = parseDatabaseUrl(text);
  const password = url.password ?? env.PDA_PG_PASSWORD;
  return {
    host: url.host,
    port: url.port,
    ...(url.database === undefined ? {} : { database: url.database }),
    ...(url.user === undefined ? {} : { user: url.user }),
    ...(password === undefined ? {} : { password }),
    ssl: tlsOptions({ ...url.tls, ...flagTls(flags) }, url.host),
    application_name: 'pda-ops',
  };
}

function fromSettings(env: NodeJS.ProcessEnv, flags: ConnectionFlags): pg.ClientConfig {
  const port = Number(env.PDA_PG_PORT ?? '55432');
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new SettingsError(`PDA_PG_PORT must be a TCP port, got ${JSON.stringify(env.PDA_PG_PORT)}`);
  }
  const host = env.PDA_PG_HOST ?? '127.0.0.1';
  const tls: TlsSettings = {
    ...(env.PDA_PG_SSLMODE ? { sslmode: env.PDA_PG_SSLMODE } : {}),
    ...(env.PDA_PG_SSLROOTCERT ? { sslrootcert: env.PDA_PG_SSLROOTCERT } : {}),
    ...flagTls(flags),
  };
  return {
    host,
    port,
    database: env.PDA_PG_DATABASE ?? 'pda',
    user: env.PDA_PG_USER ?? 'pda',
    ...(env.PDA_PG_PASSWORD === undefined ? {} : { password: env.PDA_PG_PASSWORD }),
    ssl: tlsOptions(tls, host),
    application_name: 'pda-ops',
  };
}

/** The connection the CLIs use, or a SettingsError saying what to set. */
export function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  stackEnv: (env: NodeJS.ProcessEnv) => Record<string, string> = (e) => readStackEnv(stackEnvFile(e)),
): ResolvedConnection {
  const flagUrl = flags['database-url'];
  if (flagUrl !== undefined) {
    if (parseDatabaseUrl(flagUrl).password !== undefined) {
      throw new SettingsError(
        '--database-url must not hold a password (a command line is visible to every user in ps): put the URL in PDA_DATABASE_URL, or the password in PDA_PG_PASSWORD',
      );
    }
    return { config: fromUrl(flagUrl, flags, env), from: '--database-url' };
  }
  if (env.PDA_DATABASE_URL)
    return { config: fromUrl(env.PDA_DATABASE_URL, flags, env), from: 'PDA_DATABASE_URL' };
  if (PG_SETTINGS.some((name) => env[name])) return { config: fromSettings(env, flags), from: 'PDA_PG_*' };
  const stack = stackEnv(env);
  if (stack.PDA_PG_HOST) {
    return { config: fromSettings(stack, flags), from: `the stack's env file ${stackEnvFile(env)}` };
  }
  throw new SettingsError(
    `no database to connect to: set PDA_DATABASE_URL=postgres://user:password@host:port/db?sslmode=verify-full (or PDA_PG_HOST, PDA_PG_USER, PDA_PG_PASSWORD, …); only the native stack's ${stackEnvFile(env)} is used without them, and there is none`,
  );
}

/** A connected client; PostgreSQL asking for a password that nobody set is said so. */
export async function connectClient(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    if (error instanceof Error && /password must be a string/.test(error.message)) {
      throw new Error(
        'PostgreSQL asks for a password and none is set (the URL, PDA_PG_PASSWORD or PGPASSWORD)',
      );
    }
    throw error;
  }
  return client;
}
