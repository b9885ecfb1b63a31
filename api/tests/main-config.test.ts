import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEntryPoint } from '@pda/projections/testing';
import { describe, expect, it } from 'vitest';

// The process contract of the api (README.md, Configuration): a bad configuration is refused before
// the server is built, with exit code 2 and one line on stderr. The timeout turns "it started
// anyway" into a failure, not a hang.
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('api main.ts with a bad configuration', () => {
  it('refuses a misspelt API_ variable: exit 2, one line naming it', async () => {
    const { code, stderr } = await runEntryPoint(main, {
      API_DATA_DIR: '/nonexistent',
      API_CURSOR_SECRET: 's'.repeat(32),
      API_PORT: '0',
      API_PROT: '1',
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toBe('api: invalid api configuration: API_PROT: unknown setting\n');
  });

  it('refuses an admin port that is not a port: exit 2, one line naming it', async () => {
    const { code, stderr } = await runEntryPoint(main, {
      API_DATA_DIR: '/nonexistent',
      API_CURSOR_SECRET: 's'.repeat(32),
      API_PORT: '0',
      API_ADMIN_PORT: '70000',
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/^api: invalid api configuration: API_ADMIN_PORT: [^\n]+\n$/);
  });

  it('refuses an ownership file that does not name this writer: exit 2, one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-api-main-ownership-'));
    try {
      const ownership = join(dir, 'ownership.json');
      writeFileSync(
        ownership,
        JSON.stringify({ partitions: 1, writers: [{ name: 'a', api: 'http://10.0.0.1:8080', serves: [0] }] }),
      );
      const secret = join(dir, 'secret');
      writeFileSync(secret, `${'s'.repeat(64)}\n`);
      const { code, stderr } = await runEntryPoint(main, {
        API_DATA_DIR: '/nonexistent',
        API_CURSOR_SECRET: 's'.repeat(32),
        API_PORT: '0',
        API_OWNERSHIP_FILE: ownership,
        API_WRITER_NAME: 'b',
        API_FORWARD_SECRET_FILE: secret,
      });
      expect(code, stderr).toBe(2);
      expect(stderr).toMatch(
        /^api: invalid api configuration: API_WRITER_NAME: writer "b" is not in the ownership file[^\n]*\n$/,
      );
      expect(stderr).not.toContain('s'.repeat(32));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
