// libpq's TLS settings (sslmode, sslrootcert, sslcert, sslkey), turned into node-postgres' `ssl`
// option (the options of Node's tls.connect) with libpq's meaning:
//   disable      no TLS (also what no sslmode means here)
//   require      TLS, the server's certificate not checked; with sslrootcert, as verify-ca (libpq too)
//   verify-ca    TLS, the server's certificate chain checked against sslrootcert (else Node's CA store)
//   verify-full  verify-ca, and the certificate must name the host connected to
// `allow` and `prefer` go plaintext when the server has no TLS. node-postgres cannot do that, and
// a silent fallback to plaintext is what these settings exist to rule out: they are refused.
// sslrootcert=system means Node's CA store, as leaving it out does.
import { readFileSync } from 'node:fs';
import { type ConnectionOptions, checkServerIdentity } from 'node:tls';
import { SettingsError } from '@pda/projections/cli';

export const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const;
export type TlsSettings = Partial<Record<(typeof TLS_PARAMETERS)[number], string>>;

const MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
type Mode = (typeof MODES)[number];

export type ReadTlsFile = (path: string) => string;

function readWith(read: ReadTlsFile, setting: string, path: string): string {
  try {
    return read(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new SettingsError(`cannot read ${setting} ${path}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
}

function mode(settings: TlsSettings): Mode | undefined {
  const value = settings.sslmode;
  if (value === undefined || value === '') return undefined;
  if (value === 'allow' || value === 'prefer') {
    throw new SettingsError(
      `sslmode=${value} may fall back to plaintext, which this tool does not do: use require, verify-ca or verify-full (or disable)`,
    );
  }
  if (!(MODES as readonly string[]).includes(value)) {
    throw new SettingsError(`sslmode must be one of ${MODES.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as Mode;
}

/** node-postgres' `ssl` for these settings and the host connected to; files are read here. */
export function tlsOptions(
  settings: TlsSettings,
  host: string,
  read: ReadTlsFile = (path) => readFileSync(path, 'utf8'),
): false | ConnectionOptions {
  const sslmode = mode(settings);
  const files = (['sslrootcert', 'sslcert', 'sslkey'] as const).filter((name) => settings[name]);
  if (sslmode === undefined || sslmode === 'disable') {
    if (files.length > 0) {
      throw new SettingsError(`${files[0]} needs sslmode=require, verify-ca or verify-full`);
    }
    return false;
  }
  if (Boolean(settings.sslcert) !== Boolean(settings.sslkey)) {
    throw new SettingsError('sslcert and sslkey go together (the client certificate and its key)');
  }
  const options: ConnectionOptions = {};
  const rootcert = settings.sslrootcert;
  if (rootcert && rootcert !== 'system') options.ca = readWith(read, 'sslrootcert', rootcert);
  if (settings.sslcert && settings.sslkey) {
    options.cert = readWith(read, 'sslcert', settings.sslcert);
    options.key = readWith(read, 'sslkey', settings.sslkey);
  }
  if (sslmode === 'require' && !rootcert) return { ...options, rejectUnauthorized: false };
  if (sslmode === 'verify-full') {
    // Against the host as configured, whatever name node-postgres gives tls.connect (none for an IP).
    return {
      ...options,
      rejectUnauthorized: true,
      checkServerIdentity: (_name, cert) => checkServerIdentity(host, cert),
    };
  }
  // verify-ca, or require with a root certificate: the chain is checked, the name is not.
  return { ...options, rejectUnauthorized: true, checkServerIdentity: () => undefined };
}
