// Scripts read the env file of the stack they started: <PDA_STACK_DIR or repo/.stack>/env, through
// scripts/lib/stack-env.sh, never a fixed .stack/env.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../src/stack-env.ts';

const dir = mkdtempSync(join(tmpdir(), 'pda-stack-env-sh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function inScript(body: string, env: Record<string, string | undefined>) {
  const { PDA_STACK_DIR: _, ...inherited } = process.env;
  return spawnSync('bash', ['-c', `set -euo pipefail; source scripts/lib/stack-env.sh; ${body}`], {
    cwd: repoRoot,
    env: { ...inherited, ...env },
    encoding: 'utf8',
  });
}

describe('scripts/lib/stack-env.sh', () => {
  it('sources <PDA_STACK_DIR>/env when PDA_STACK_DIR is set', () => {
    const stack = join(dir, 'elsewhere');
    mkdirSync(stack);
    writeFileSync(join(stack, 'env'), 'export PDA_PG_PORT=55999\n');
    const out = inScript('source_stack_env; echo "$PDA_PG_PORT"', { PDA_STACK_DIR: stack });
    expect(out.stderr).toBe('');
    expect(out.stdout.trim()).toBe('55999');
  });

  it('falls back to <repo>/.stack/env', () => {
    const out = inScript('stack_env_file', {});
    expect(out.stdout.trim()).toBe(join(repoRoot, '.stack', 'env'));
  });

  it('stops with one line naming the missing file', () => {
    const out = inScript('source_stack_env; echo reached', { PDA_STACK_DIR: join(dir, 'none') });
    expect(out.status).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim().split('\n')).toEqual([
      `bash: ${join(dir, 'none', 'env')} is missing: start the stack first (bash dev-world/stack/stack.sh up)`,
    ]);
  });

  it('is what every script uses: none reads .stack/env itself', () => {
    const scripts = ['scripts', 'scripts/lib'].flatMap((folder) =>
      readdirSync(join(repoRoot, folder))
        .filter((f) => f.endsWith('.sh'))
        .map((f) => join(folder, f)),
    );
    for (const script of scripts) {
      const code = readFileSync(join(repoRoot, script), 'utf8')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('#'));
      expect(
        code.filter((line) => line.includes('.stack/env')),
        script,
      ).toEqual([]);
    }
  });
});
