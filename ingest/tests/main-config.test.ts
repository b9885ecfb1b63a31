import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runEntryPoint } from '@pda/projections/testing';
import { describe, expect, it } from 'vitest';

// The process contract of `start` (ingest/README.md, exit codes): a bad configuration is refused
// before anything connects, with exit code 2 and one line on stderr. The broker address is never
// dialled, so no stack is needed.
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('ingest main.ts with a bad configuration', () => {
  it('refuses a misspelt INGEST_ variable: exit 2, one line naming it', async () => {
    const { code, stderr } = await runEntryPoint(main, {
      INGEST_KAFKA_BROKERS: '127.0.0.1:1',
      INGEST_DATA_DIR: '/nonexistent',
      INGEST_ADMIN_PORT: '0',
      INGEST_KAFKA_BROKRES: 'x',
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toBe('invalid ingest configuration: INGEST_KAFKA_BROKRES: unknown setting\n');
  });

  it('names every bad variable on the same line', async () => {
    const { code, stderr } = await runEntryPoint(main, {
      INGEST_DATA_DIR: '/nonexistent',
      INGEST_ADMIN_PROT: '1',
    });
    expect(code, stderr).toBe(2);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/INGEST_KAFKA_BROKERS: .*INGEST_ADMIN_PROT: unknown setting/);
  });

  it('refuses an open-file limit too low to run: exit 2, one line naming it', async () => {
    const refused = spawn('prlimit', ['--nofile=40:40', process.execPath, main], {
      env: {
        PATH: process.env.PATH ?? '',
        INGEST_KAFKA_BROKERS: '127.0.0.1:1',
        INGEST_DATA_DIR: '/nonexistent',
        INGEST_ADMIN_PORT: '0',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    refused.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(
      /^ingest: the open-file limit \(40\) is below the 96 ingest needs at least; [^\n]*\n$/,
    );
  });
});
