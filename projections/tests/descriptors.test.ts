import { totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  descriptorReserve,
  isOutOfDescriptors,
  MIN_OPEN_FILE_LIMIT,
  OutOfDescriptorsError,
  openFileLimit,
  openFileLimitProblem,
  openFilesBudget,
  processMemoryBytes,
  resolveOpenFilesBound,
  retryOutOfDescriptors,
} from '../src/model/index.ts';

// Cache bounds from the descriptor limit (src/model/descriptors.ts): three descriptors per open file.
const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                65536                files
Max locked memory         8388608              8388608              bytes
`;

describe('openFileLimit', () => {
  it.each([
    ['the soft limit of /proc/self/limits', LIMITS, 20_000],
    ['unlimited', LIMITS.replace('20000', 'unlimited'), Number.MAX_SAFE_INTEGER],
    ['no such line', 'Max cpu time unlimited unlimited seconds\n', undefined],
    ['a value that is not a number', LIMITS.replace('20000', 'lots'), undefined],
  ])('%s', (_name, text, expected) => {
    expect(openFileLimit(text)).toBe(expected);
  });

  it("reads this process's own limit on Linux", () => {
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});

describe('openFilesBudget', () => {
  it.each([
    // limit, reserve, files
    [20_000, 2048, 5984],
    [20_000, 512, 6496],
    [1024, 512, 170],
    // a low limit keeps half for files whatever the reserve asks
    [64, 512, 10],
    [3, 512, 1],
    [undefined, 512, 170],
  ])('limit %s, reserve %s → %s files', (limit, reserve, files) => {
    expect(openFilesBudget({ limit, reserve })).toBe(files);
  });

  it('a quarter of the memory bounds it too, at 256 KiB per open file', () => {
    const GiB = 2 ** 30;
    expect(openFilesBudget({ limit: 1_048_576, reserve: 2048, memoryBytes: GiB })).toBe(1024);
    expect(openFilesBudget({ limit: 20_000, reserve: 2048, memoryBytes: 24 * GiB })).toBe(5984);
    expect(openFilesBudget({ limit: 20_000, reserve: 512, memoryBytes: 1024 * 1024 })).toBe(1);
  });

  it("this process's memory is its cgroup's or the machine's, whichever is less", () => {
    expect(processMemoryBytes()).toBeGreaterThan(0);
    expect(processMemoryBytes()).toBeLessThanOrEqual(totalmem());
  });
});

describe('resolveOpenFilesBound', () => {
  const options = { limit: 1024, reserve: 512 };
  it('auto is the budget', () => {
    expect(resolveOpenFilesBound('auto', options)).toEqual({
      max: 170,
      source: 'auto',
      limit: 1024,
      budget: 170,
    });
  });
  it('a number within the budget is kept', () => {
    expect(resolveOpenFilesBound(100, options)).toMatchObject({ max: 100, source: 'configured' });
  });
  it('a number above the budget is cut to it', () => {
    expect(resolveOpenFilesBound(10_000, options)).toMatchObject({ max: 170, source: 'clamped' });
  });
});

describe('openFileLimitProblem', () => {
  it('none at or above the floor, or when the limit is unknown', () => {
    expect(openFileLimitProblem(MIN_OPEN_FILE_LIMIT, 'ingest')).toBeUndefined();
    expect(openFileLimitProblem(20_000, 'ingest')).toBeUndefined();
    expect(openFileLimitProblem(undefined, 'ingest')).toBeUndefined();
  });
  it('one line naming the limit, the floor and the deployable below it', () => {
    expect(openFileLimitProblem(40, 'ingest')).toMatch(
      /^the open-file limit \(40\) is below the 96 ingest needs at least; [^\n]+$/,
    );
  });
});

describe('isOutOfDescriptors', () => {
  it.each([
    [{ code: 'SQLITE_CANTOPEN' }, true],
    [{ code: 'EMFILE' }, true],
    [{ code: 'ENFILE' }, true],
    [new OutOfDescriptorsError('/x.sqlite'), true],
    [{ code: 'SQLITE_BUSY' }, false],
    [new Error('boom'), false],
    [null, false],
  ])('%o → %s', (error, expected) => {
    expect(isOutOfDescriptors(error)).toBe(expected);
  });
});

describe('descriptorReserve', () => {
  it('keeps what is wanted, at most half of the limit (1,024 when unknown)', () => {
    expect(descriptorReserve(1_048_576, 512)).toBe(512);
    expect(descriptorReserve(600, 512)).toBe(300);
    expect(descriptorReserve(undefined, 2048)).toBe(512);
  });
});

describe('retryOutOfDescriptors', () => {
  const emfile = () => Object.assign(new Error('too many open files'), { code: 'EMFILE' });

  it('retries once after the files were given back', () => {
    let calls = 0;
    let gaveBack = 0;
    const open = () => {
      calls++;
      if (calls === 1) throw emfile();
      return 'opened';
    };
    expect(retryOutOfDescriptors(open, () => ++gaveBack > 0)).toBe('opened');
    expect([calls, gaveBack]).toEqual([2, 1]);
  });

  it('rethrows when nothing could be given back, or for another error', () => {
    expect(() =>
      retryOutOfDescriptors(
        () => {
          throw emfile();
        },
        () => false,
      ),
    ).toThrow('too many open files');
    let gaveBack = 0;
    expect(() =>
      retryOutOfDescriptors(
        () => {
          throw new Error('boom');
        },
        () => ++gaveBack > 0,
      ),
    ).toThrow('boom');
    expect(gaveBack).toBe(0);
  });
});
