import type { Tracing } from '@pda/tracing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { type Config, parseConfig } from '../../src/config.ts';

export const TEST_BASE_URL = 'https://api.test.example';
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef';

export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return parseConfig({
    API_DATA_DIR: dataDir,
    API_CURSOR_SECRET: TEST_CURSOR_SECRET,
    API_PUBLIC_BASE_URL: TEST_BASE_URL,
    API_REOPEN_CHECK_MS: '0',
    API_BUILD_INFO_FILE: '/nonexistent/build-info.json',
    // Load shedding judges the event loop of the whole test process (fixture building blocks it
    // for seconds on a busy machine): a bound no test reaches; under-pressure tests set their own.
    API_MAX_EVENT_LOOP_DELAY_MS: '60000',
    // Closing an app waits for its clients' idle kept-alive connections to time out (seconds each)
    // unless they are cut: tests that are not about closing cut them at once; drain.test.ts sets
    // its own.
    API_DRAIN_TIMEOUT_MS: '0',
    // The whole suite once more with list pages read by reader threads (api/README.md, "Reader threads").
    ...(process.env.PDA_TEST_API_READ_THREADS && { API_READ_THREADS: process.env.PDA_TEST_API_READ_THREADS }),
    ...env,
  });
}

export async function testApp(
  dataDir: string,
  options: { env?: Record<string, string>; now?: () => number; tracing?: Tracing } = {},
): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(dataDir, options.env), {
    logger: false,
    ...(options.now ? { now: options.now } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  });
  await app.ready();
  return app;
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
