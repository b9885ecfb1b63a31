// No secret defaults and no password on a command line (a process's arguments are readable by every
// user of the machine through `ps` and /proc/<pid>/cmdline; its environment only by its own user):
// - the native stack starts Apicurio Registry and provisions PostgreSQL's roles with the passwords
//   in the processes' environment (lib/registry.sh, lib/postgres.sh, sql/*.sql's \getenv);
// - the registry image's entrypoint and compose's postgres init do the same;
// - docker-compose.yml has no secret literal, and compose.sh's env file is random, private and kept.
// Each start command is run for real with stand-ins for java and psql that record their arguments
// and environment. The running pipeline is checked the same way, by `ps`, in
// test/containers/compose.containers.test.ts.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '..', '..');

const dir = mkdtempSync(join(tmpdir(), 'pda-no-secret-defaults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRETS = {
  PDA_PG_PASSWORD: 'app-secret-5b1f',
  PDA_DEBEZIUM_PASSWORD: 'cdc-secret-77ad',
  PDA_REGISTRY_DB_PASSWORD: 'registry-secret-c0de',
};

// A stand-in for `name` in `bin`: records each call's arguments (one a line), environment and stdin.
function recorder(bin: string, name: string): void {
  mkdirSync(bin, { recursive: true });
  const path = join(bin, name);
  writeFileSync(
    path,
    `#!/usr/bin/env bash
n=$(find "$RECORD_DIR" -name '${name}.*.args' | wc -l)
printf '%s\\n' "$@" >"$RECORD_DIR/${name}.$n.args"
env >"$RECORD_DIR/${name}.$n.env"
cat >"$RECORD_DIR/${name}.$n.stdin"
`,
  );
  chmodSync(path, 0o755);
}

interface Call {
  args: string[];
  env: Record<string, string>;
  stdin: string;
}

function calls(record: string, name: string): Call[] {
  const count = readdirSync(record).filter((f) => f.startsWith(`${name}.`) && f.endsWith('.args')).length;
  return Array.from({ length: count }, (_, n) => {
    const read = (ext: string) => readFileSync(join(record, `${name}.${n}.${ext}`), 'utf8');
    const env = Object.fromEntries(
      read('env')
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    return { args: read('args').split('\n').slice(0, -1), env, stdin: read('stdin') };
  });
}

function bash(script: string, env: NodeJS.ProcessEnv) {
  const out = spawnSync('bash', ['-c', script], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

function fresh(name: string): { root: string; record: string; bin: string } {
  const root = join(dir, name);
  const record = join(root, 'record');
  mkdirSync(record, { recursive: true });
  return { root, record, bin: join(root, 'bin') };
}

function expectNoSecretIn(list: Call[], secrets: string[]): void {
  for (const call of list) {
    for (const secret of secrets) expect(call.args.join(' ')).not.toContain(secret);
  }
}

describe('the native stack', () => {
  it('starts the registry with its database password in the environment, not on the command line', () => {
    const { root, record, bin } = fresh('native-registry');
    recorder(join(root, 'jdk', 'bin'), 'java');
    recorder(bin, 'psql');
    const run = bash(
      `set -euo pipefail
source dev-world/stack/lib/common.sh; source dev-world/stack/lib/postgres.sh; source dev-world/stack/lib/registry.sh
pg_as_owner() { "$@"; }
require_free_port() { :; }
wait_for_start() { wait; }
mkdir -p "$LOG_DIR" "$RUN_DIR" "$REGISTRY_APP"
echo "$REGISTRY_APP/apicurio-registry-app-runner.jar" >"$REGISTRY_APP/runner-jar"
registry_start`,
      {
        ...SECRETS,
        RECORD_DIR: record,
        PDA_STACK_DIR: join(root, 'stack'),
        PDA_PG_HOME: join(root, 'pg'),
        PDA_CACHE_DIR: join(root, 'cache'),
        PDA_PG_BINDIR: bin,
        JAVA_HOME: join(root, 'jdk'),
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const [java] = calls(record, 'java');
    expect(java?.args).toContain('-Dapicurio.datasource.username=pda_registry');
    expect(java?.args.some((arg) => /password/i.test(arg))).toBe(false);
    expect(java?.env.APICURIO_DATASOURCE_PASSWORD).toBe(SECRETS.PDA_REGISTRY_DB_PASSWORD);
    // registry_start provisions the registry's role first: psql gets the password the same way.
    const psql = calls(record, 'psql');
    expect(psql).toHaveLength(1);
    expect(psql[0]?.stdin).toContain('\\getenv registry_password PDA_REGISTRY_DB_PASSWORD');
    expect(psql[0]?.env.PDA_REGISTRY_DB_PASSWORD).toBe(SECRETS.PDA_REGISTRY_DB_PASSWORD);
    expectNoSecretIn([...psql, java as Call], Object.values(SECRETS));
  });

  it("provisions PostgreSQL's roles with the passwords in psql's environment", () => {
    const { root, record, bin } = fresh('native-postgres');
    recorder(bin, 'psql');
    const run = bash(
      `set -euo pipefail
source dev-world/stack/lib/common.sh; source dev-world/stack/lib/postgres.sh
pg_as_owner() { "$@"; }
mkdir -p "$LOG_DIR"
CAPTURED_TABLES=sites,companies
pg_provision`,
      {
        ...SECRETS,
        RECORD_DIR: record,
        PDA_STACK_DIR: join(root, 'stack'),
        PDA_PG_HOME: join(root, 'pg'),
        PDA_PG_BINDIR: bin,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const psql = calls(record, 'psql');
    const roles = psql.find((call) => call.stdin.includes('Roles of the operational database'));
    expect(roles?.env.PDA_PG_PASSWORD).toBe(SECRETS.PDA_PG_PASSWORD);
    expect(roles?.env.PDA_DEBEZIUM_PASSWORD).toBe(SECRETS.PDA_DEBEZIUM_PASSWORD);
    expect(psql.length).toBeGreaterThan(1);
    expectNoSecretIn(psql, Object.values(SECRETS));
  });
});

describe('the images', () => {
  function entrypoint(name: string, env: NodeJS.ProcessEnv) {
    const { root, record, bin } = fresh(name);
    recorder(bin, 'java');
    const home = join(root, 'registry');
    mkdirSync(home);
    writeFileSync(join(home, 'apicurio-registry-app-3.0.9-runner.jar'), '');
    const run = bash('bash dev-world/containers/kafka/registry-entrypoint.sh', {
      PATH: `${bin}:${process.env.PATH}`,
      RECORD_DIR: record,
      REGISTRY_HOME: home,
      REGISTRY_DATASOURCE_URL: 'jdbc:postgresql://postgres:5432/pda_registry',
      ...env,
    });
    return { run, java: calls(record, 'java')[0], root };
  }

  it('the registry entrypoint hands the password to the JVM in its environment', () => {
    const { run, java } = entrypoint('image-registry', { REGISTRY_DATASOURCE_PASSWORD: 'image-secret-1' });
    expect(run.code, run.stderr).toBe(0);
    expect(java?.args.some((arg) => /password/i.test(arg))).toBe(false);
    expect(java?.args.join(' ')).not.toContain('image-secret-1');
    expect(java?.env.APICURIO_DATASOURCE_PASSWORD).toBe('image-secret-1');
    expect(java?.env.REGISTRY_DATASOURCE_PASSWORD).toBeUndefined();
  });

  it('the registry entrypoint reads REGISTRY_DATASOURCE_PASSWORD_FILE, and has no default', () => {
    const file = join(dir, 'registry-password');
    writeFileSync(file, 'file-secret-2\n');
    const fromFile = entrypoint('image-registry-file', { REGISTRY_DATASOURCE_PASSWORD_FILE: file });
    expect(fromFile.run.code, fromFile.run.stderr).toBe(0);
    expect(fromFile.java?.env.APICURIO_DATASOURCE_PASSWORD).toBe('file-secret-2');
    const none = entrypoint('image-registry-none', {});
    expect(none.run.code).not.toBe(0);
    expect(none.run.stderr).toContain(
      'REGISTRY_DATASOURCE_PASSWORD (or REGISTRY_DATASOURCE_PASSWORD_FILE) is required',
    );
    expect(none.java).toBeUndefined();
  });

  it("compose's postgres init gives psql the passwords in its environment, and requires each", () => {
    const env = {
      POSTGRES_USER: 'pda',
      POSTGRES_PASSWORD: SECRETS.PDA_PG_PASSWORD,
      POSTGRES_DB: 'pda',
      PDA_DEBEZIUM_USER: 'debezium',
      PDA_DEBEZIUM_PASSWORD: SECRETS.PDA_DEBEZIUM_PASSWORD,
      PDA_REGISTRY_DB_PASSWORD: SECRETS.PDA_REGISTRY_DB_PASSWORD,
      PDA_CAPTURED_TABLES: 'sites',
    };
    const { record, bin } = fresh('compose-init');
    recorder(bin, 'psql');
    const init = (extra: NodeJS.ProcessEnv) =>
      bash('bash dev-world/stack/compose/postgres-init.sh', {
        PATH: `${bin}:${process.env.PATH}`,
        RECORD_DIR: record,
        ...extra,
      });
    const run = init(env);
    expect(run.code, run.stderr).toBe(0);
    const psql = calls(record, 'psql');
    const roles = psql.find((call) => call.args.includes('/pda/sql/roles.sql'));
    const registry = psql.find((call) => call.args.includes('/pda/sql/registry-db.sql'));
    expect(roles?.env.PDA_PG_PASSWORD).toBe(SECRETS.PDA_PG_PASSWORD);
    expect(roles?.env.PDA_DEBEZIUM_PASSWORD).toBe(SECRETS.PDA_DEBEZIUM_PASSWORD);
    expect(registry?.env.PDA_REGISTRY_DB_PASSWORD).toBe(SECRETS.PDA_REGISTRY_DB_PASSWORD);
    expectNoSecretIn(psql, Object.values(SECRETS));
    const { PDA_REGISTRY_DB_PASSWORD: _, ...withoutRegistry } = env;
    expect(init(withoutRegistry).stderr).toContain('PDA_REGISTRY_DB_PASSWORD is not set');
  });
});

describe('docker-compose.yml and compose.sh', () => {
  it('has no secret literal: every password and the cursor secret is a required variable', () => {
    const lines = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('#'));
    const secrets = lines.filter((line) => /^\s+[A-Z_]*(PASSWORD|SECRET)[A-Z_]*:/.test(line));
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const line of secrets) {
      const value = line.slice(line.indexOf(':') + 1).trim();
      // A required variable, an alias of one, or the optional previous cursor secret (empty).
      const required = /^(&[\w-]+ )?"\$\{[A-Z_]+:\?[^}]+\}"$/.test(value) || /^\*[\w-]+$/.test(value);
      expect(required || value === '$' + '{API_CURSOR_SECRET_PREVIOUS:-}', line).toBe(true);
    }
    // The health check's psql gets the container's variable, expanded by its shell.
    expect(lines.join('\n')).not.toMatch(/PGPASSWORD=(?!\\"\$\$POSTGRES_PASSWORD\\")/);
  });

  const secretsLib = (file: string, body: string, env: NodeJS.ProcessEnv = {}) =>
    bash(
      `set -euo pipefail
source dev-world/containers/lib/common.sh; source dev-world/containers/lib/secrets.sh
docker() { [[ -n "\${PGDATA_VOLUME:-}" ]]; }   # stand-in: does the project's pgdata volume exist?
${body}`,
      { PDA_COMPOSE_ENV_FILE: file, COMPOSE_PROJECT_NAME: 'pdatest', ...env },
    );

  it('up writes random secrets to a private env file once, and never overwrites it', () => {
    const file = join(dir, 'compose.env');
    const first = secretsLib(file, 'ensure_env_file');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`wrote random secrets for the demo to ${file} (mode 0600`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    const values = [...text.matchAll(/^([A-Z_]+)=([0-9a-f]{64})$/gm)].map((m) => [m[1], m[2]]);
    expect(values.map(([name]) => name)).toEqual([
      'API_CURSOR_SECRET',
      'PDA_PG_PASSWORD',
      'PDA_DEBEZIUM_PASSWORD',
      'PDA_REGISTRY_DB_PASSWORD',
    ]);
    expect(new Set(values.map(([, value]) => value)).size).toBe(4);
    const again = secretsLib(file, 'ensure_env_file; load_env_file; printenv PDA_PG_PASSWORD');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(again.stdout.trim()).toBe(values[1]?.[1]);
  });

  it('refuses an env file without a secret, warns about a readable one, and never remakes the passwords of a database', () => {
    const partial = join(dir, 'partial.env');
    writeFileSync(partial, 'API_CURSOR_SECRET=0123456789abcdef0123456789abcdef\nPDA_PG_PASSWORD=x\n', {
      mode: 0o644,
    });
    const refused = secretsLib(partial, 'ensure_env_file');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `containers: error: ${partial} has no PDA_DEBEZIUM_PASSWORD PDA_REGISTRY_DB_PASSWORD: add it (NAME=value), or remove the file and 'up' writes a new one\n`,
    );
    writeFileSync(partial, 'PDA_DEBEZIUM_PASSWORD=y\nPDA_REGISTRY_DB_PASSWORD=z\n', { flag: 'a' });
    expect(secretsLib(partial, 'ensure_env_file').stderr).toContain('has mode 644: chmod 600 it');
    const orphan = secretsLib(join(dir, 'gone.env'), 'ensure_env_file', { PGDATA_VOLUME: '1' });
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toContain(
      'volume pdatest_pgdata holds a database made with the passwords of a missing',
    );
  });
});
