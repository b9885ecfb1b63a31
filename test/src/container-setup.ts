// vitest globalSetup of the e2e-containers project: the same e2e files as the native project, with
// their stack from testcontainers (container-stack.ts) instead of dev-world/stack. The images must exist
// (dev-world/containers/build-images.sh; scripts/test.sh builds them first): a missing one fails here
// with that command, never silently skips. Its addresses go to process.env and to a private stack
// env file (PDA_STACK_DIR), so test workers find them the way they find the native stack's.
import { execFileSync } from 'node:child_process';

// Before testcontainers loads: its reaper image cannot be pulled here; container-stack.ts stops
// everything it started (teardown below).
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

export default async function setup(): Promise<() => Promise<void>> {
  const { CONTAINER_IMAGES, startContainerStack } = await import('./container-stack.ts');
  for (const image of Object.values(CONTAINER_IMAGES)) {
    try {
      execFileSync('docker', ['image', 'inspect', image], { stdio: 'ignore' });
    } catch {
      throw new Error(`image ${image} is missing: run bash dev-world/containers/build-images.sh`);
    }
  }
  const started = Date.now();
  const stack = await startContainerStack();
  Object.assign(process.env, stack.env);
  console.log(`container stack ready in ${Math.round((Date.now() - started) / 1000)} s (${stack.stackDir})`);
  return async () => {
    await stack.stop();
  };
}
