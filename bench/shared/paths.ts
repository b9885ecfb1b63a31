/**
 * The repository's root and bench/results/, for scripts at any depth of bench/ (entries sit one
 * folder down, their parts two): a path computed from a script's own folder would move with it.
 */
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '..', '..');

/** bench/: where `pnpm --filter @pda/bench exec` runs, so relative options resolve against it. */
export const benchDir = join(repoRoot, 'bench');

/** The dated result documents the entries write (bench/README.md). */
export const resultsDir = join(benchDir, 'results');
