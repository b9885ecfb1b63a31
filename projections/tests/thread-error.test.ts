import { describe, expect, it } from 'vitest';
import { deserializeError, serializeError } from '../src/model/thread-error.ts';

// The round trip must go through structured clone, as postMessage does.
const roundTrip = (error: unknown) => deserializeError(structuredClone(serializeError(error)));

describe('errors across the apply thread', () => {
  it('keeps name, code, message, stack and the cause chain', () => {
    const root = Object.assign(new Error('disk I/O error'), { name: 'SqliteError', code: 'SQLITE_IOERR' });
    const outer = Object.assign(new Error('apply failed', { cause: root }), { code: 42 });
    const back = roundTrip(outer);
    expect(back).toBeInstanceOf(Error);
    expect(back).toMatchObject({ name: 'Error', message: 'apply failed', code: 42, stack: outer.stack });
    expect(back.cause).toBeInstanceOf(Error);
    expect(back.cause).toMatchObject({
      name: 'SqliteError',
      code: 'SQLITE_IOERR',
      message: 'disk I/O error',
      stack: root.stack,
    });
  });

  it('bounds a cyclic cause chain', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    let depth = 0;
    for (let e: unknown = roundTrip(a); e instanceof Error; e = e.cause) depth++;
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThanOrEqual(5);
  });

  it('describes a thrown non-Error, and one whose toString throws', () => {
    expect(roundTrip('plain string')).toMatchObject({ name: 'Error', message: 'plain string' });
    const hostile = {
      toString() {
        throw new Error('no');
      },
    };
    expect(roundTrip(hostile).message).toBe('[object Object]');
    expect(roundTrip(new Error('no code'))).not.toHaveProperty('code');
  });
});
