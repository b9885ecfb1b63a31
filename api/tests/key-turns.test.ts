import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KeyTurns } from '../src/rate-limit/key-turns.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// A key runs at most one request a turn of the event loop (api/src/rate-limit/key-turns.ts): one
// key's many connections cannot put all their pages ahead of another tenant's request.

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('KeyTurns', () => {
  test('one request per key a turn, in arrival order; another key is not held back', async () => {
    const turns = new KeyTurns();
    const ran: string[] = [];
    const request = async (key: string, name: string) => {
      const turn = turns.take(key);
      if (turn) await turn;
      ran.push(name);
    };
    const all = Promise.all([
      request('a', 'a1'),
      request('a', 'a2'),
      request('a', 'a3'),
      request('b', 'b1'),
      request('b', 'b2'),
    ]);
    await Promise.resolve();
    expect(ran).toEqual(['a1', 'b1']);
    expect(turns.waiting).toBe(3);
    await nextTurn();
    expect(ran).toEqual(['a1', 'b1', 'a2', 'b2']);
    await all;
    expect(ran).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
    expect(turns.waiting).toBe(0);
  });

  test('a key that ran in an earlier turn runs at once again', async () => {
    const turns = new KeyTurns();
    expect(turns.take('a')).toBeUndefined();
    await nextTurn();
    await nextTurn();
    expect(turns.take('a')).toBeUndefined();
  });
});

describe('in the api', () => {
  let f: Fixture;
  let app: FastifyInstance;
  beforeAll(async () => {
    f = createFixture();
    app = await testApp(f.dataDir, {
      // Pages read on the loop, each within its turn. Read by reader threads, a key's requests stay
      // in progress while they wait for a thread, and the cap refuses the excess (read-pool.test.ts).
      env: { API_MAX_IN_PROGRESS_PER_KEY: '8', API_RATE_LIMIT_MAX: '10000', API_READ_THREADS: '0' },
    });
  });
  afterAll(async () => {
    await app.close();
    f.cleanup();
  });

  test("another company's request is answered before most of a key's burst", async () => {
    const done: string[] = [];
    const call = (key: string, name: string) =>
      app.inject({ method: 'GET', url: '/v1/sites?limit=50', headers: bearer(key) }).then((response) => {
        expect(response.statusCode, response.body).toBe(200);
        done.push(name);
      });
    const burst = Array.from({ length: 6 }, (_, n) => call(f.keys.a, `a${n}`));
    await Promise.all([...burst, call(f.keys.b, 'b')]);
    // Without turns the six pages of key a are all read before b's (b is answered last).
    expect(done.indexOf('b')).toBeLessThanOrEqual(2);
  });

  test('requests waiting for their turn are not refused by the in-progress cap: a burst of 12 on a cap of 8 is served', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () =>
        app
          .inject({ method: 'GET', url: '/v1/sites?limit=5', headers: bearer(f.keys.a) })
          .then((r) => r.statusCode),
      ),
    );
    expect(statuses).toEqual(Array.from({ length: 12 }, () => 200));
  });
});
