// vitest globalSetup of the projects that start processes (e2e, e2e-containers, containers): one
// scratch directory per run as TMPDIR, removed when the run ends. Tests make their data
// directories, private stacks and logs with mkdtemp(tmpdir()), and the ingest, api and stack
// processes they start inherit TMPDIR: whatever a test leaves behind (a killed process's files, a
// failed test's directory) goes with the run instead of filling the disk run after run.
// PDA_KEEP_TEST_TMP=1 keeps it for a look (its path is printed).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'pda-test-'));
  process.env.TMPDIR = dir;
  return () => {
    if (process.env.PDA_KEEP_TEST_TMP === '1') console.log(`test scratch directory kept: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
