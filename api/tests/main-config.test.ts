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
});
