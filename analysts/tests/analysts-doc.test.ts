import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPda } from '../src/testing/run-pda.ts';
import { seedProjection } from '../src/testing/seed-projection.ts';

// docs/analysts.md shows real output: every ```console block's `$ pnpm -s pda …` commands run here
// on a freshly built demo projection (the same rows, ids and times as the guide's), in a working
// directory with the guide's .data/analysis.sqlite, and print exactly the text the guide shows.
// Blocks whose output varies (times, sizes) are ```text blocks and are not run.

const guide = readFileSync(fileURLToPath(new URL('../../docs/analysts.md', import.meta.url)), 'utf8');

interface Example {
  readonly command: string;
  readonly output: string;
}

/** The `$ command` lines of the guide's console blocks, each with the lines it printed. */
function examples(markdown: string): Example[] {
  const found: Example[] = [];
  for (const block of markdown.matchAll(/```console\n([\s\S]*?)```/g)) {
    let current: { command: string; output: string[] } | undefined;
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.startsWith('$ ')) {
        if (current) found.push({ command: current.command, output: current.output.join('\n') });
        current = { command: line.slice(2), output: [] };
      } else {
        current?.output.push(line);
      }
    }
    if (current) found.push({ command: current.command, output: current.output.join('\n') });
  }
  return found;
}

/** Shell words: spaces split, single and double quotes group (no escapes in the guide's commands). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

let root: string;
let dataDir: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-doc-'));
  dataDir = join(root, '.data/analysts-demo');
  mkdirSync(dataDir, { recursive: true });
  seedProjection(dataDir);
  const snapshot = await runPda(
    ['projections', 'snapshot', '--all', '--out', '.data/analysis.sqlite'],
    { PDA_DATA_DIR: dataDir },
    { cwd: root },
  );
  expect(snapshot.code, snapshot.stderr).toBe(0);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('docs/analysts.md', () => {
  const all = examples(guide);

  it('has five worked questions, each run below', () => {
    expect(guide.match(/^### \d\. /gm)).toHaveLength(5);
    expect(all.length).toBeGreaterThanOrEqual(5);
  });

  it.each(all.map((example) => [example.command.slice(0, 90), example] as const))(
    '%s',
    async (_, example) => {
      const [pnpm, silent, pda, ...args] = words(example.command);
      expect([pnpm, silent, pda]).toEqual(['pnpm', '-s', 'pda']);
      const result = await runPda(args, { PDA_DATA_DIR: dataDir }, { cwd: root });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trimEnd()).toBe(example.output.trimEnd());
    },
  );
});
