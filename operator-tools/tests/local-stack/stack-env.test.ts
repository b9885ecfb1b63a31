// The one reader of the stack's env file follows PDA_STACK_DIR like dev-world/stack/stack.sh does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readStackEnv, stackDir, stackEnvFile } from '../../local-stack/stack-env.ts';

const dir = mkdtempSync(join(tmpdir(), 'pda-stack-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Written the way stack.sh writes it: bash's printf %q.
function writeEnvFile(values: Record<string, string>): string {
  const lines = Object.entries(values).map(([k, v]) => `printf 'export %s=%q\\n' ${k} ${JSON.stringify(v)}`);
  execFileSync('bash', ['-c', `{ echo '# comment'; ${lines.join('; ')}; } > "$1"`, 'bash', join(dir, 'env')]);
  return join(dir, 'env');
}

describe('stack env file', () => {
  it('lives in PDA_STACK_DIR when it is set, else in <repo>/.stack', () => {
    expect(stackDir({ PDA_STACK_DIR: dir })).toBe(dir);
    expect(stackEnvFile({ PDA_STACK_DIR: dir })).toBe(join(dir, 'env'));
    const repoStack = join(import.meta.dirname, '..', '..', '..', '.stack');
    expect(stackDir({})).toBe(repoStack);
    expect(stackDir({ PDA_STACK_DIR: '' })).toBe(repoStack);
  });

  it('reads the export lines stack.sh writes, quoting included', () => {
    const file = writeEnvFile({ PDA_PG_PORT: '55999', PDA_STACK_DIR: `${dir}/with space` });
    expect(readStackEnv(file)).toEqual({ PDA_PG_PORT: '55999', PDA_STACK_DIR: `${dir}/with space` });
  });

  it('is empty when no stack was started in that dir', () => {
    expect(readStackEnv(join(dir, 'nothing', 'env'))).toEqual({});
  });
});
