// The connector's format switch (PDA_CONNECTOR_FORMAT, dev-world/stack/README.md): connector.json ships
// Avro through the registry with exactly the settings of dev-world/stack/converters/avro.json, and the
// native stack (lib/connect.sh, jq) and docker-compose's registration job (compose/
// register-connector.sh, plain bash) build the same connector config for every format.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '..', '..', '..');

const FORMATS = ['avro', 'json', 'json-schemaless'] as const;
const read = (path: string) =>
  JSON.parse(readFileSync(join(repoRoot, path), 'utf8')) as Record<string, string>;
const converterKeys = (config: Record<string, string>) =>
  Object.fromEntries(Object.entries(config).filter(([k]) => /^(key|value)[.]converter/.test(k)));

/** What `stack.sh up` registers (without table.include.list's real list). */
function nativeConfig(format: string): Record<string, string> {
  const out = execFileSync(
    'bash',
    [
      '-c',
      'source dev-world/stack/lib/common.sh; source dev-world/stack/lib/connect.sh; CAPTURED_TABLES=sites,companies; connector_desired_config',
    ],
    { cwd: repoRoot, env: { ...process.env, PDA_CONNECTOR_FORMAT: format }, encoding: 'utf8' },
  );
  return JSON.parse(out);
}

/** What compose's connect-register job sends (the script up to its request). */
function composeConfig(format: string): Record<string, string> {
  const script = readFileSync(join(repoRoot, 'dev-world/stack/compose/register-connector.sh'), 'utf8');
  const upToConfig = script.slice(0, script.indexOf('\nresponse='));
  const out = execFileSync('bash', ['-c', `${upToConfig}\nprintf '%s' "$config"`], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PDA_CONNECTOR_FORMAT: format,
      PDA_CAPTURED_TABLES: 'sites,companies',
      PDA_CONNECT_URL: 'http://127.0.0.1:1',
      PDA_CONNECTOR_JSON: join(repoRoot, 'dev-world/stack/connector.json'),
      PDA_CONVERTERS_DIR: join(repoRoot, 'dev-world/stack/converters'),
    },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('the connector format', () => {
  it('connector.json ships Avro through the registry, as converters/avro.json', () => {
    expect(converterKeys(read('dev-world/stack/connector.json'))).toEqual(
      read('dev-world/stack/converters/avro.json'),
    );
  });

  it.each(FORMATS)('%s: the native stack and compose register the same config', (format) => {
    const native = nativeConfig(format);
    expect(composeConfig(format)).toEqual(native);
    expect(converterKeys(native)).toEqual(read(`dev-world/stack/converters/${format}.json`));
    expect(native['table.include.list']).toBe('public.sites,public.companies');
  });

  it('an unknown format is refused with one line naming the choices', () => {
    const native = spawnSync(
      'bash',
      [
        '-c',
        'source dev-world/stack/lib/common.sh; source dev-world/stack/lib/connect.sh; connector_converters',
      ],
      { cwd: repoRoot, env: { ...process.env, PDA_CONNECTOR_FORMAT: 'protobuf' }, encoding: 'utf8' },
    );
    expect(native.status).toBe(1);
    expect(native.stderr).toMatch(/PDA_CONNECTOR_FORMAT='protobuf': expected avro, json or json-schemaless/);
    expect(() => composeConfig('protobuf')).toThrow(/expected avro, json or json-schemaless/);
  });
});
