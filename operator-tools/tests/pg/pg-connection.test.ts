// Where the keys and seed CLIs connect (operator-tools/pg/connection.ts): a URL with libpq's TLS settings, the
// PDA_PG_* settings, the native stack's env file, else a refusal; no default password anywhere.
// The TLS settings are checked against a stand-in server that speaks PostgreSQL's SSLRequest and
// then TLS with certificates made here by openssl.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { SettingsError } from '@pda/projections/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, parseDatabaseUrl, resolveConnection, tlsOptions } from '../../pg/index.ts';
import { runOpsCli } from '../../testing/cli-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'pda-pg-connection-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noStack = () => ({});
const files: Record<string, string> = { '/ca.pem': 'CA', '/me.pem': 'CERT', '/me.key': 'KEY' };
const fakeRead = (path: string) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return text;
};

describe('the database URL', () => {
  it('gives host, port, database, user, decoded password and the TLS parameters', () => {
    expect(
      parseDatabaseUrl(
        'postgres://ops%40acme:p%40ss%2Fw@db.example.com:6432/pda?sslmode=verify-full&sslrootcert=/ca.pem',
      ),
    ).toEqual({
      host: 'db.example.com',
      port: 6432,
      database: 'pda',
      user: 'ops@acme',
      password: 'p@ss/w',
      tls: { sslmode: 'verify-full', sslrootcert: '/ca.pem' },
    });
    expect(parseDatabaseUrl('postgresql://[::1]/pda')).toEqual({
      host: '::1',
      port: 5432,
      database: 'pda',
      tls: {},
    });
    expect(parseDatabaseUrl('postgres://pda@127.0.0.1')).toEqual({
      host: '127.0.0.1',
      port: 5432,
      user: 'pda',
      tls: {},
    });
  });

  it.each([
    ['not a url', /not a URL/],
    ['mysql://u@h/db', /must start with postgres:\/\//],
    ['postgres:///pda', /names no host/],
    ['postgres://u@a,b/pda', /several hosts/],
    ['postgres://u@h/pda/x', /one database name/],
    ['postgres://u@h/pda?application_name=x', /"application_name" is not supported/],
    ['postgres://u:%zz@h/pda', /password is not valid percent-encoding/],
  ])('refuses %s', (url, message) => {
    expect(() => parseDatabaseUrl(url)).toThrow(SettingsError);
    expect(() => parseDatabaseUrl(url)).toThrow(message);
  });

  it('never repeats the URL (it may hold a password) in its errors', () => {
    expect(() => parseDatabaseUrl('postgres://u:secret-pw@h/pda?x=1')).toThrow(/^(?!.*secret-pw)/);
  });
});

describe('sslmode and the certificates', () => {
  it('disable, or no sslmode: no TLS', () => {
    expect(tlsOptions({}, 'h', fakeRead)).toBe(false);
    expect(tlsOptions({ sslmode: 'disable' }, 'h', fakeRead)).toBe(false);
  });

  it('require: TLS without checking the certificate; with sslrootcert, the chain is checked', () => {
    expect(tlsOptions({ sslmode: 'require' }, 'h', fakeRead)).toEqual({ rejectUnauthorized: false });
    const withCa = tlsOptions({ sslmode: 'require', sslrootcert: '/ca.pem' }, 'h', fakeRead);
    expect(withCa).toMatchObject({ ca: 'CA', rejectUnauthorized: true });
  });

  it('verify-ca and verify-full check the chain; sslrootcert=system leaves Node its own CA store', () => {
    expect(tlsOptions({ sslmode: 'verify-ca', sslrootcert: '/ca.pem' }, 'h', fakeRead)).toMatchObject({
      ca: 'CA',
      rejectUnauthorized: true,
    });
    const full = tlsOptions({ sslmode: 'verify-full', sslrootcert: 'system' }, 'h', fakeRead);
    expect(full).toMatchObject({ rejectUnauthorized: true });
    expect(full && 'ca' in full).toBe(false);
  });

  it('reads a client certificate and its key', () => {
    expect(
      tlsOptions(
        { sslmode: 'verify-full', sslrootcert: '/ca.pem', sslcert: '/me.pem', sslkey: '/me.key' },
        'h',
        fakeRead,
      ),
    ).toMatchObject({ ca: 'CA', cert: 'CERT', key: 'KEY' });
  });

  it.each([
    [{ sslmode: 'prefer' }, /may fall back to plaintext/],
    [{ sslmode: 'allow' }, /may fall back to plaintext/],
    [{ sslmode: 'verify' }, /sslmode must be one of disable, require, verify-ca, verify-full/],
    [{ sslrootcert: '/ca.pem' }, /sslrootcert needs sslmode=require, verify-ca or verify-full/],
    [{ sslmode: 'disable', sslrootcert: '/ca.pem' }, /sslrootcert needs sslmode/],
    [{ sslmode: 'require', sslcert: '/me.pem' }, /sslcert and sslkey go together/],
    [{ sslmode: 'verify-full', sslrootcert: '/nope.pem' }, /cannot read sslrootcert \/nope.pem \(ENOENT\)/],
  ])('refuses %j', (settings, message) => {
    expect(() => tlsOptions(settings, 'h', fakeRead)).toThrow(SettingsError);
    expect(() => tlsOptions(settings, 'h', fakeRead)).toThrow(message);
  });
});

describe('which settings apply', () => {
  const stack = () => ({
    PDA_PG_HOST: '127.0.0.1',
    PDA_PG_PORT: '55432',
    PDA_PG_USER: 'pda',
    PDA_PG_PASSWORD: 'demo',
  });

  it('--database-url first, then PDA_DATABASE_URL, then PDA_PG_*, then the stack env file', () => {
    const env = {
      PDA_DATABASE_URL: 'postgres://env:pw@env-host/envdb',
      PDA_PG_HOST: 'pg-host',
      PDA_PG_PASSWORD: 'pg-pw',
    };
    const flag = resolveConnection({ 'database-url': 'postgres://flag@flag-host:7000/flagdb' }, env, stack);
    expect(flag.from).toBe('--database-url');
    expect(flag.config).toMatchObject({ host: 'flag-host', port: 7000, database: 'flagdb', user: 'flag' });
    // Without a password in the URL: PDA_PG_PASSWORD's.
    expect(flag.config.password).toBe('pg-pw');

    const url = resolveConnection({}, env, stack);
    expect(url.from).toBe('PDA_DATABASE_URL');
    expect(url.config).toMatchObject({ host: 'env-host', user: 'env', password: 'pw', database: 'envdb' });

    const settings = resolveConnection({}, { PDA_PG_HOST: 'pg-host', PDA_PG_PASSWORD: 'pg-pw' }, stack);
    expect(settings.from).toBe('PDA_PG_*');
    expect(settings.config).toMatchObject({
      host: 'pg-host',
      port: 55432,
      user: 'pda',
      password: 'pg-pw',
      ssl: false,
    });

    const demo = resolveConnection({}, { PDA_STACK_DIR: '/somewhere' }, stack);
    expect(demo.from).toBe("the stack's env file /somewhere/env");
    expect(demo.config).toMatchObject({ host: '127.0.0.1', port: 55432, user: 'pda', password: 'demo' });
  });

  it('has no default password: PDA_PG_* without one leaves it to PGPASSWORD', () => {
    const { config } = resolveConnection({}, { PDA_PG_HOST: 'db' }, stack);
    expect('password' in config).toBe(false);
    expect('password' in resolveConnection({ 'database-url': 'postgres://u@h/d' }, {}, noStack).config).toBe(
      false,
    );
  });

  it('refuses with one line when nothing is set and there is no stack env file', () => {
    const refuse = () => resolveConnection({}, { PDA_STACK_DIR: '/nowhere' }, noStack);
    expect(refuse).toThrow(SettingsError);
    expect(refuse).toThrow(
      /^no database to connect to: set PDA_DATABASE_URL=postgres:\/\/.*\/nowhere\/env is used without them, and there is none$/,
    );
  });

  it('refuses a password in --database-url (visible in ps), naming where to put it instead', () => {
    expect(() => resolveConnection({ 'database-url': 'postgres://u:secret@h/d' }, {}, noStack)).toThrow(
      /--database-url must not hold a password .* PDA_DATABASE_URL, or the password in PDA_PG_PASSWORD$/,
    );
  });

  it('--sslmode and --sslrootcert override the URL and PDA_PG_SSLMODE', () => {
    const ca = join(dir, 'flag-ca.pem');
    writeFileSync(ca, 'FLAG CA');
    const { config } = resolveConnection(
      { 'database-url': 'postgres://u@h/d?sslmode=require', sslmode: 'verify-full', sslrootcert: ca },
      {},
      noStack,
    );
    expect(config.ssl).toMatchObject({ ca: 'FLAG CA', rejectUnauthorized: true });
    const fromEnv = resolveConnection({}, { PDA_PG_HOST: 'h', PDA_PG_SSLMODE: 'require' }, noStack);
    expect(fromEnv.config.ssl).toEqual({ rejectUnauthorized: false });
    expect(
      resolveConnection({ sslmode: 'disable' }, { PDA_PG_HOST: 'h', PDA_PG_SSLMODE: 'require' }, noStack)
        .config.ssl,
    ).toBe(false);
  });
});

// A server that answers PostgreSQL's SSLRequest with 'S' and then speaks TLS with `cert` (or with
// 'N', no TLS); it ends each connection once the handshake is done and counts those handshakes.
function standIn(
  cert: { key: string; cert: string } | null,
): Promise<{ server: Server; port: number; handshakes: () => number }> {
  let handshakes = 0;
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (chunk) => {
      const sslRequest = chunk.length === 8 && chunk.readInt32BE(4) === 80877103;
      if (!sslRequest || cert === null) {
        if (sslRequest) socket.end('N');
        else socket.destroy();
        return;
      }
      socket.write('S');
      const secure = new TLSSocket(socket, { isServer: true, ...cert });
      secure.on('error', () => {});
      secure.on('secure', () => {
        handshakes += 1;
        secure.destroy();
      });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : 0,
        handshakes: () => handshakes,
      });
    }),
  );
}

describe('TLS against a stand-in server', () => {
  const pem = (name: string) => join(dir, name);
  let tlsServer: Awaited<ReturnType<typeof standIn>>;
  let plainServer: Awaited<ReturnType<typeof standIn>>;

  beforeAll(async () => {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    for (const ca of ['ca', 'other-ca']) {
      openssl(
        'req',
        '-x509',
        ...key,
        '-days',
        '2',
        '-subj',
        `/CN=${ca}`,
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.pem`,
      );
    }
    // The server's certificate names 127.0.0.1 only: "localhost" is a name mismatch.
    openssl('req', ...key, '-subj', '/CN=stand-in', '-keyout', 'server.key', '-out', 'server.csr');
    writeFileSync(pem('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl(
      'x509',
      '-req',
      '-days',
      '2',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    );
    tlsServer = await standIn({
      key: readFileSync(pem('server.key'), 'utf8'),
      cert: readFileSync(pem('server.pem'), 'utf8'),
    });
    plainServer = await standIn(null);
  });

  afterAll(() => {
    tlsServer?.server.close();
    plainServer?.server.close();
  });

  async function attempt(host: string, port: number, query: string): Promise<string> {
    const { config } = resolveConnection(
      {},
      { PDA_DATABASE_URL: `postgres://pda@${host}:${port}/pda?${query}` },
      noStack,
    );
    try {
      const client = await connectClient({ ...config, connectionTimeoutMillis: 5000 });
      await client.end();
      return 'connected';
    } catch (error) {
      return (error as Error).message;
    }
  }

  it('verify-full with the right CA and host: the handshake completes', async () => {
    const before = tlsServer.handshakes();
    const outcome = await attempt(
      '127.0.0.1',
      tlsServer.port,
      `sslmode=verify-full&sslrootcert=${pem('ca.pem')}`,
    );
    // The stand-in ends the connection after the handshake: PostgreSQL's part never comes.
    expect(outcome).toMatch(/terminated unexpectedly|ECONNRESET|closed/i);
    expect(tlsServer.handshakes()).toBe(before + 1);
  });

  it('verify-full refuses another CA and a host the certificate does not name; verify-ca takes the name', async () => {
    const before = tlsServer.handshakes();
    expect(
      await attempt('127.0.0.1', tlsServer.port, `sslmode=verify-full&sslrootcert=${pem('other-ca.pem')}`),
    ).toMatch(/certificate/i);
    expect(
      await attempt('localhost', tlsServer.port, `sslmode=verify-full&sslrootcert=${pem('ca.pem')}`),
    ).toMatch(/does not match certificate's altnames/);
    expect(tlsServer.handshakes()).toBe(before);
    expect(
      await attempt('localhost', tlsServer.port, `sslmode=verify-ca&sslrootcert=${pem('ca.pem')}`),
    ).not.toMatch(/certificate/i);
    expect(tlsServer.handshakes()).toBe(before + 1);
  });

  it('require takes an unverified certificate, and never falls back to plaintext', async () => {
    const before = tlsServer.handshakes();
    expect(await attempt('127.0.0.1', tlsServer.port, 'sslmode=require')).not.toMatch(/certificate/i);
    expect(tlsServer.handshakes()).toBe(before + 1);
    expect(await attempt('127.0.0.1', plainServer.port, 'sslmode=require')).toMatch(/does not support SSL/);
  });
});

describe('the keys CLI', () => {
  const bare = { PATH: process.env.PATH, PDA_STACK_DIR: join(dir, 'no-stack') };

  it('refuses with one line and exit 2 when no database is set and no stack env file exists', async () => {
    const out = await runOpsCli('keys', ['list'], bare);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^error: no database to connect to: set PDA_DATABASE_URL=.*there is none\n$/);
    expect(out.stdout).toBe('');
  });

  it('refuses a password in --database-url with one line and exit 2', async () => {
    const out = await runOpsCli(
      'keys',
      ['list', '--database-url', 'postgres://pda:hunter2@127.0.0.1:1/pda'],
      bare,
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^error: --database-url must not hold a password [^\n]*\n$/);
    expect(out.stderr).not.toContain('hunter2');
  });

  it('connects where --database-url says (here: nothing listens, exit 1)', async () => {
    const out = await runOpsCli('keys', ['list', '--database-url', 'postgres://pda@127.0.0.1:1/pda'], bare);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^error: cannot reach PostgreSQL \(connect ECONNREFUSED 127\.0\.0\.1:1\)\n$/);
  });
});
