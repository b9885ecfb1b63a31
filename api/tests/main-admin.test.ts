import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { runEntryPoint } from '@pda/projections/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, type Fixture } from './support/fixture.ts';
import { TEST_CURSOR_SECRET } from './support/test-app.ts';

// The api process opens its admin port (server.ts) before the public one: /healthz and /metrics
// answer there, SIGTERM closes both, and a busy admin port refuses to start (exit 1, one line).
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

let f: Fixture;
beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());

describe('api main.ts and its admin port', () => {
  it('serves /healthz and /metrics on the admin port it logs, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH ?? '',
        API_DATA_DIR: f.dataDir,
        API_CURSOR_SECRET: TEST_CURSOR_SECRET,
        API_PORT: '0',
        API_ADMIN_PORT: '0',
        API_BUILD_INFO_FILE: '/nonexistent/build-info.json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`no admin log line: ${output}`)), 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          for (const line of output.split('\n')) {
            if (!line.includes('admin server listening')) continue;
            clearTimeout(timer);
            resolve((JSON.parse(line) as { port: number }).port);
          }
        });
        child.once('exit', () => reject(new Error(`exited: ${output}`)));
      });
      expect(port).toBeGreaterThan(0);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain('# TYPE pda_api_requests_total counter');
      expect(metrics).toContain('pda_api_process_start_time_seconds');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('refuses to start when the admin port is taken: exit 1, one line', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const { code, stderr } = await runEntryPoint(main, {
        API_DATA_DIR: f.dataDir,
        API_CURSOR_SECRET: TEST_CURSOR_SECRET,
        API_PORT: '0',
        API_ADMIN_PORT: String(port),
        API_LOG_LEVEL: 'silent',
      });
      expect(code, stderr).toBe(1);
      expect(stderr).toMatch(/^api: failed to start: listen EADDRINUSE[^\n]*\n$/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
