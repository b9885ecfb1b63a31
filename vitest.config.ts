import { defineConfig } from 'vitest/config';

// Three projects, named by what a test needs (docs/architecture.md#code-conventions):
// - unit: `*.test.ts`, pure logic, SQLite files in temp dirs and our own CLIs and scripts as child
//   processes (node, bash, haproxy -c); no PostgreSQL, Kafka or Docker;
// - e2e:  `*.e2e.test.ts`, the real stack (PostgreSQL, Kafka, Connect + Debezium) started by dev-world/stack;
// - e2e-containers: the e2e files that pin the CDC path (Debezium events, the ingest pipeline),
//   their stack from testcontainers on the images built here instead of dev-world/stack;
// - containers: `*.containers.test.ts`, the images built here and a Docker engine (dev-world/containers).
const exclude = ['**/node_modules/**', '**/.stack/**', '**/.data/**'];
// @fastify/autoload imports the api's plugin and route files with a native import(); processed by
// Vitest instead, those files share one module graph with the test's own imports (one copy of each
// module, Vitest's transform and coverage) instead of a second graph loaded natively by Node.
const server = { deps: { inline: ['@fastify/autoload'] } };
// Worker threads, not child processes, for the two long projects: with Vitest 3's child-process
// pool on Node 24, a task handed to a worker whose IPC channel had closed ended two CI runs at once
// (`Unhandled Rejection: Error: Channel closed`, ERR_IPC_CHANNEL_CLOSED from tinypool's
// ProcessWorker.send; Vitest's main process exits on it without writing its report). Threads
// have no IPC channel. Every file passes in either pool.
const pool = 'threads';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          server,
          pool,
          include: ['**/*.test.ts'],
          exclude: [...exclude, '**/*.e2e.test.ts', '**/*.containers.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          server,
          pool,
          include: ['**/*.e2e.test.ts'],
          exclude,
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // The e2e files share one real stack; running them one at a time keeps them independent.
          fileParallelism: false,
          // The scratch TMPDIR after the stack is up: stack.sh keeps its lock under TMPDIR, and the
          // test script's own stack.sh calls use the usual one.
          globalSetup: ['test/src/global-setup.ts', 'test/src/scratch-tmpdir.ts'],
        },
      },
      {
        test: {
          name: 'e2e-containers',
          server,
          include: ['test/cdc-events.e2e.test.ts', 'test/ingest-pipeline.e2e.test.ts'],
          exclude,
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          globalSetup: ['test/src/scratch-tmpdir.ts', 'test/src/container-setup.ts'],
        },
      },
      {
        test: {
          name: 'containers',
          include: ['**/*.containers.test.ts'],
          exclude,
          testTimeout: 300_000,
          hookTimeout: 900_000,
          // Each file starts its own containers; one at a time on two cores.
          fileParallelism: false,
          globalSetup: ['test/src/scratch-tmpdir.ts'],
        },
      },
    ],
  },
});
