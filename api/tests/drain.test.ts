import { Agent, get as httpGet, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testConfig } from './support/test-app.ts';

// Closing the api under clients that keep their connections alive (api/README.md, "Stop";
// connections/drain.ts): no request that reached a connection is lost, every answer during the drain says
// `Connection: close`, a held change-feed request is answered at once, and an idle connection that
// never sends again is cut at API_DRAIN_TIMEOUT_MS. A connection the kernel has queued for accept
// when the close begins (the loop held, as a busy CPU holds it) is answered too, not reset.

let f: Fixture;
beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());

async function listening(env: Record<string, string>): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp(testConfig(f.dataDir, { API_RATE_LIMIT_MAX: '1000000', ...env }), {
    logger: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as AddressInfo).port };
}

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly body: string;
}

function request(port: number, path: string, agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: '127.0.0.1', port, path, agent, headers: bearer(f.keys.a) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(answer(res, body)));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const answer = (res: IncomingMessage, body: string): Answer => ({
  status: res.statusCode ?? 0,
  connection: res.headers.connection,
  body,
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('closing the api while clients keep connections alive', () => {
  test('loses no request: each client pages until its connection is refused, none reset, none 5xx', async () => {
    const outcomes = { answered: 0, serverErrors: 0, refused: 0, failures: [] as string[] };
    // Several closes at different moments: the race this guards against (a request sent on an idle
    // connection the server destroys) needs the close to fall between two requests of a client.
    for (let round = 0; round < 8; round++) {
      const { app, port } = await listening({ API_DRAIN_TIMEOUT_MS: '10000' });
      let stop = false;
      const clients = Array.from({ length: 4 }, async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          while (!stop) {
            try {
              const { status } = await request(port, '/v1/sites?limit=5', agent);
              if (status >= 500) outcomes.serverErrors += 1;
              else outcomes.answered += 1;
            } catch (error) {
              const code = (error as NodeJS.ErrnoException).code ?? String(error);
              // Refused: the port no longer listens. Nothing was sent; a client tries elsewhere.
              if (code === 'ECONNREFUSED') {
                outcomes.refused += 1;
                return;
              }
              outcomes.failures.push(code);
            }
            await pause(5);
          }
        } finally {
          agent.destroy();
        }
      });
      await pause(60 + round * 17);
      await app.close();
      stop = true;
      await Promise.all(clients);
    }
    expect(outcomes.failures).toEqual([]);
    expect(outcomes.serverErrors).toBe(0);
    expect(outcomes.answered).toBeGreaterThan(8 * 4);
  });

  test('a connection waiting in the accept queue when the close begins is answered, not reset', async () => {
    const { app, port } = await listening({ API_DRAIN_TIMEOUT_MS: '10000' });
    const answered = request(port, '/v1/sites?limit=1', new Agent({ keepAlive: false })).catch(
      (error: NodeJS.ErrnoException) => error.code ?? String(error),
    );
    // The client's connect() runs on the next tick; then the loop is held, as a busy CPU or a long
    // synchronous read holds it, while the kernel completes the connection and queues it for
    // accept. The close begins before the loop polls again.
    await new Promise((resolve) => process.nextTick(resolve));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    const closed = app.close();
    const outcome = await answered;
    await closed;
    expect(outcome).toMatchObject({ status: 200, connection: 'close' });
  });

  test('an answer during the drain says Connection: close; a held change-feed request is answered at once', async () => {
    const { app, port } = await listening({ API_DRAIN_TIMEOUT_MS: '10000' });
    // Two kept-alive connections: one idle at the close, one holding a change-feed request.
    const idle = new Agent({ keepAlive: true, maxSockets: 1 });
    const holding = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await request(port, '/v1/changes?filter[type]=consumables&limit=100', idle);
      expect(first.status, first.body).toBe(200);
      expect(first.connection).toBe('keep-alive');
      const next = (JSON.parse(first.body) as { links: { next: string } }).links.next;
      const url = new URL(`${next}&wait=20`);
      const started = Date.now();
      const held = request(port, `${url.pathname}${url.search}`, holding);
      await pause(100);
      const closed = app.close();
      const heldAnswer = await held;
      expect(heldAnswer.status, heldAnswer.body).toBe(200);
      expect(heldAnswer.connection).toBe('close');
      // The connection idle at the close is still served (no new one is accepted).
      const during = await request(port, '/v1/sites?limit=1', idle);
      expect(during.status, during.body).toBe(200);
      expect(during.connection).toBe('close');
      await closed;
      // Both connections ended with their `close` answers: no wait for a keep-alive timeout.
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      idle.destroy();
      holding.destroy();
    }
  });

  test('an idle connection that never sends again is cut at API_DRAIN_TIMEOUT_MS', async () => {
    const { app, port } = await listening({
      API_DRAIN_TIMEOUT_MS: '300',
      API_KEEP_ALIVE_TIMEOUT_MS: '30000',
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await request(port, '/v1/sites?limit=1', agent)).status).toBe(200);
      const socketClosed = new Promise<void>((resolve) => {
        const [socket] = Object.values(agent.freeSockets).flat();
        socket?.once('close', () => resolve());
      });
      const started = Date.now();
      await app.close();
      await socketClosed;
      const ms = Date.now() - started;
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(5_000);
    } finally {
      agent.destroy();
    }
  });
});
