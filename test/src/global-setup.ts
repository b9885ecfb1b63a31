// vitest globalSetup of the e2e project: make sure the native stack runs, then expose its addresses.
// `stack.sh up` is idempotent (a running stack costs well under a second), and the stack is left
// running afterwards on purpose: the next run reuses it; the test script or a developer stops it
// with `bash dev-world/stack/stack.sh down`.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadStackEnv, repoRoot } from './stack-env.ts';

export default function setup(): void {
  const up = spawnSync('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), 'up'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (up.status !== 0) {
    throw new Error(
      `dev-world/stack/stack.sh up failed (exit ${up.status ?? up.signal}); see the line above`,
    );
  }
  loadStackEnv();
}
