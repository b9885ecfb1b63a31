import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The measuring script of docs/architecture.md ("The walk of one change") keeps measuring the
// real path: it steps one site update from the client's batch callback to the committed write.
// The figures docs/architecture.md reports are the ones it measures today.
const script = fileURLToPath(new URL('../scripts/walk-of-one-change.ts', import.meta.url));

interface Walk {
  readonly files: number;
  readonly returns: number;
  readonly helperBounces: number;
  readonly filesVisited: readonly string[];
}

const walk = () =>
  new Promise<Walk>((resolve, reject) => {
    execFile(process.execPath, [script], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as Walk);
    });
  });

describe('the walk of one change (ingest/scripts/walk-of-one-change.ts)', () => {
  it('goes from the Kafka hand-over through decode and plan to the committed write', async () => {
    const { files, filesVisited } = await walk();
    for (const file of [
      'ingest/src/kafka/hand-over.ts',
      'ingest/src/batch/pipeline.ts',
      'ingest/src/decode/decoder.ts',
      'ingest/src/decode/compile-row-decoder.ts',
      'projections/src/write/store.ts',
      'projections/src/write/plan/plan-tenant.ts',
      'projections/src/write/apply/company-rows.ts',
      'projections/src/write/apply/apply-control.ts',
    ])
      expect(filesVisited).toContain(file);
    expect(files).toBe(filesVisited.length);
    // It ends with the write: nothing of the offset bookkeeping is counted.
    expect(filesVisited).not.toContain('ingest/src/kafka/offset-committer.ts');
  });
});

it('docs/architecture.md reports the figures the script measures', async () => {
  const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8').replace(
    /\s+/g,
    ' ',
  );
  const cited =
    /visits \*\*(\d+) files\*\*.*?comes back \*\*(\d+) times\*\* to a file it had left, besides (\d+) bounces/.exec(
      doc,
    );
  expect(cited, 'the walk paragraph of docs/architecture.md').not.toBeNull();
  const { files, returns, helperBounces } = await walk();
  expect(cited?.slice(1).map(Number)).toEqual([files, returns, helperBounces]);
});
