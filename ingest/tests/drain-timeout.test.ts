import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@pda/projections/testing';
import { afterAll, describe, expect, it } from 'vitest';

// A stop with the broker gone (ingest/README.md, exit codes; INGEST_DRAIN_TIMEOUT_MS): the drain
// cannot commit or leave the group, so it is cut short after its bound, with one line saying so and
// exit code 1. No broker is needed: ingest is pointed at a loopback port nothing listens on.
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'ingest-drain-timeout-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('ingest stopped while the broker is unreachable', () => {
  it('exits within INGEST_DRAIN_TIMEOUT_MS with code 1 and one line saying why', async () => {
    const drainTimeoutMs = 2_000;
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env.PATH ?? '',
        // Free a moment ago and closed again: every connection is refused.
        INGEST_KAFKA_BROKERS: `127.0.0.1:${await freePort()}`,
        INGEST_DATA_DIR: dataDir,
        INGEST_ADMIN_PORT: '0',
        INGEST_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: { msg?: string; level?: number }[] = [];
    let pending = '';
    let consuming: () => void = () => {};
    const consumingLogged = new Promise<void>((resolve) => {
      consuming = resolve;
    });
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      pending += text;
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const line of complete) {
        try {
          const parsed = JSON.parse(line) as { msg?: string; level?: number };
          lines.push(parsed);
          if (parsed.msg === 'consuming') consuming();
        } catch {
          // not a log line (kafkajs or Node printing raw text)
        }
      }
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await consumingLogged;
      // kafkajs is now connecting and retrying against the closed port.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const signalledAt = Date.now();
      child.kill('SIGTERM');
      const code = await exited;
      const ms = Date.now() - signalledAt;
      expect(code).toBe(1);
      // The drain could not finish by itself: it ran until its bound, then the process exited.
      expect(ms).toBeGreaterThanOrEqual(drainTimeoutMs - 100);
      expect(ms).toBeLessThan(drainTimeoutMs + 5_000);
      expect(lines.filter((line) => line.msg === 'draining')).toHaveLength(1);
      const cut = lines.filter((line) => line.msg?.startsWith('drain did not finish'));
      expect(cut).toHaveLength(1);
      expect(cut[0]).toMatchObject({
        level: 40,
        drainTimeoutMs,
        msg: expect.stringContaining('exiting without committing the offsets of unfinished work'),
      });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
