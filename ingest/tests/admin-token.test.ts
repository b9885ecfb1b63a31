import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';

// INGEST_ADMIN_TOKEN_FILE (ingest/README.md, "Operations: admin port"): read once with the rest of
// the configuration, refused with one line when unreadable or too weak, never printed.
const dir = mkdtempSync(join(tmpdir(), 'pda-admin-token-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { INGEST_KAFKA_BROKERS: '127.0.0.1:59092', INGEST_DATA_DIR: '/tmp/x' };
const TOKEN = '0123456789abcdef'.repeat(4);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

describe('INGEST_ADMIN_TOKEN_FILE', () => {
  it('unset by default: no token', () => {
    expect(parseConfig(base).admin.token).toBeUndefined();
  });

  it('reads the token once, without its final newline; accepts only that token', () => {
    const path = file('token', `${TOKEN}\n`);
    const token = parseConfig({ ...base, INGEST_ADMIN_TOKEN_FILE: path }).admin.token;
    expect(token?.file).toBe(path);
    expect(token?.authorization()).toBe(`Bearer ${TOKEN}`);
    expect(token?.accepts(`Bearer ${TOKEN}`)).toBe(true);
    expect(token?.accepts(`Bearer ${TOKEN}\n`)).toBe(false);
    expect(token?.accepts(`Bearer ${TOKEN.slice(0, -1)}`)).toBe(false);
    expect(token?.accepts(undefined)).toBe(false);
    expect(token?.accepts('Bearer ')).toBe(false);
  });

  it('is never printed: a logged or inspected configuration names the file only', () => {
    const path = file('quiet', TOKEN);
    const config = parseConfig({ ...base, INGEST_ADMIN_TOKEN_FILE: path });
    expect(JSON.stringify(config)).not.toContain(TOKEN);
    expect(JSON.stringify(config)).toContain(path);
    expect(inspect(config, { depth: 5 })).not.toContain(TOKEN);
  });

  it('refuses a missing file, an empty or short token and one with spaces, with one line each', () => {
    const cases: [string, RegExp][] = [
      [
        join(dir, 'absent'),
        /^invalid ingest configuration: INGEST_ADMIN_TOKEN_FILE: cannot read .*absent: ENOENT$/,
      ],
      [dir, /INGEST_ADMIN_TOKEN_FILE: cannot read .*: EISDIR$/],
      [
        file('empty', '\n'),
        /INGEST_ADMIN_TOKEN_FILE: .*empty must hold one token of at least 32 visible ASCII/,
      ],
      [file('short', 'abc123\n'), /INGEST_ADMIN_TOKEN_FILE: .*short must hold one token/],
      [file('spaces', `${TOKEN} ${TOKEN}`), /INGEST_ADMIN_TOKEN_FILE: .*spaces must hold one token/],
    ];
    for (const [path, message] of cases) {
      let error: unknown;
      try {
        parseConfig({ ...base, INGEST_ADMIN_TOKEN_FILE: path });
      } catch (caught) {
        error = caught;
      }
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(() => parseConfig({ ...base, INGEST_ADMIN_TOKEN_FILE: '' })).toThrow(/INGEST_ADMIN_TOKEN_FILE/);
  });
});
