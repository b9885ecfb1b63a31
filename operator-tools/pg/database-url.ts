// `postgres://user:password@host:port/database?sslmode=verify-full&sslrootcert=/path/ca.pem`, the
// libpq URL form (what PDA_DATABASE_URL and --database-url take): parsed here instead of handed to
// node-postgres, so that every parameter is checked and the TLS ones keep libpq's meaning
// (./tls.ts). Percent-encoding is decoded in the user, password and database.
import { SettingsError } from '@pda/projections/cli';
import { TLS_PARAMETERS, type TlsSettings } from './tls.ts';

export interface DatabaseUrl {
  host: string;
  port: number;
  database?: string;
  user?: string;
  password?: string;
  tls: TlsSettings;
}

function decoded(what: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new SettingsError(`the database URL's ${what} is not valid percent-encoding`);
  }
}

/** The URL's parts; a SettingsError names what is wrong (never the URL itself: it may hold a password). */
export function parseDatabaseUrl(text: string): DatabaseUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SettingsError(
      'the database URL is not a URL (expected postgres://user:password@host:port/database?sslmode=...)',
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new SettingsError(
      `the database URL must start with postgres:// or postgresql://, not ${url.protocol}//`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '')
    throw new SettingsError('the database URL names no host (postgres://user@HOST:port/database)');
  if (host.includes(',')) throw new SettingsError('the database URL names several hosts; give one');
  const port = url.port === '' ? 5432 : Number(url.port);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new SettingsError(`the database URL's port must be a TCP port, got ${JSON.stringify(url.port)}`);
  }
  const database = decoded('database', url.pathname.replace(/^\//, ''));
  if (database.includes('/')) throw new SettingsError("the database URL's path must be one database name");
  const tls: TlsSettings = {};
  for (const [name, value] of url.searchParams) {
    if (!(TLS_PARAMETERS as readonly string[]).includes(name)) {
      throw new SettingsError(
        `the database URL's parameter ${JSON.stringify(name)} is not supported (supported: ${TLS_PARAMETERS.join(', ')})`,
      );
    }
    tls[name as keyof TlsSettings] = value;
  }
  return {
    host,
    port,
    ...(database === '' ? {} : { database }),
    ...(url.username === '' ? {} : { user: decoded('user', url.username) }),
    ...(url.password === '' ? {} : { password: decoded('password', url.password) }),
    tls,
  };
}
