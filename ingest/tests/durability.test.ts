import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDurabilityBarrier, syncFileSystem } from '../src/batch/durability.ts';

/** A flush the test finishes by hand, recording when each one started. */
function manualFlushes() {
  const started: Array<{ finish: (error?: Error) => void }> = [];
  const flush = () =>
    new Promise<void>((resolve, reject) => {
      started.push({ finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { started, flush };
}
const settled = async (p: Promise<unknown>) => {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('the durability barrier before offset commits', () => {
  it('makes a caller that arrives during a flush wait for the next one, shared by every such caller', async () => {
    const { started, flush } = manualFlushes();
    const barrier = createDurabilityBarrier('/unused', flush, 0);
    const first = barrier();
    const second = barrier();
    const third = barrier();
    expect(started).toHaveLength(1);
    started[0]?.finish();
    await first;
    expect(await settled(second)).toBe(false); // its commits may postdate the first flush's start
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toHaveLength(2);
    started[1]?.finish();
    await Promise.all([second, third]);
    expect(started).toHaveLength(2);
  });

  it('rejects when the flush fails, and flushes again on the next call', async () => {
    const { started, flush } = manualFlushes();
    const barrier = createDurabilityBarrier('/unused', flush, 0);
    const failing = barrier();
    started[0]?.finish(new Error('EIO'));
    await expect(failing).rejects.toThrow('EIO');
    const next = barrier();
    expect(started).toHaveLength(2);
    started[1]?.finish();
    await next;
  });

  it('flushes a real directory, and names the path when it cannot', async () => {
    await syncFileSystem(mkdtempSync(join(tmpdir(), 'durability-')));
    await expect(syncFileSystem('/no/such/dir')).rejects.toThrow('/no/such/dir');
  });
});

describe('the spacing of flushes', () => {
  it('starts a flush no sooner than the interval after the previous one started', async () => {
    const starts: number[] = [];
    const barrier = createDurabilityBarrier(
      '/unused',
      async () => {
        starts.push(Date.now());
      },
      200,
    );
    await barrier();
    await barrier();
    expect(starts).toHaveLength(2);
    expect((starts[1] as number) - (starts[0] as number)).toBeGreaterThanOrEqual(195);
  });
});
