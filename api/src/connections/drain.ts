/**
 * Closing the public port without losing a request (api/README.md, "Stop"). Node's
 * `http.Server.close()` destroys every idle kept-alive connection at once: a client that has just
 * taken such a connection from its pool to send its next request gets ECONNRESET, a request that
 * never reached the api and that a client which does not retry reports as failed. So the api stops
 * accepting connections first (the listening socket only) and lets the open ones end by
 * themselves: every answer from then on says `Connection: close` (plugins/drain.ts), so the
 * connection ends after it, and an idle one ends when its keep-alive timeout expires.
 * Whatever is still open at the deadline is destroyed.
 *
 * Closing the listening socket also resets every connection the kernel has already completed but
 * the process has not yet accepted (its accept queue): the client connected, sent its request, and
 * gets ECONNRESET for a request the api never saw. The queue is empty on an idle machine, but while
 * the event loop lags (a busy CPU, a long synchronous read) connections wait there for as long as
 * the lag, and the close runs from a timer or a signal callback, before the loop's next poll would
 * have accepted them. So the close waits until a turn of the loop has polled and accepted nothing
 * (acceptQueued): what was queued is accepted and answered with `Connection: close`; a connection
 * that arrives after the close is refused, which a client knows it may retry. What no process can
 * close: a handshake still inside the kernel at the close is reset (docs/resilience.md, "The api
 * restarted").
 */
import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';

export interface DrainOutcome {
  readonly ms: number;
  /** Connections still open at the deadline, destroyed (0 when every one ended by itself). */
  readonly destroyed: number;
}

/** Stops accepting connections and resolves once every open one has ended, or at the deadline. */
export async function drainConnections(server: Server, timeoutMs: number): Promise<DrainOutcome> {
  const started = performance.now();
  await acceptQueued(server);
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<boolean>((resolve) => {
    // net.Server's close: the listening socket only; its callback runs once the last connection has
    // ended. (http.Server's own close would first destroy the idle connections: the race above.)
    NetServer.prototype.close.call(server, () => resolve(true));
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const drained = await ended;
  clearTimeout(timer);
  let destroyed = 0;
  if (!drained) {
    destroyed = await openConnections(server);
    server.closeAllConnections();
  }
  return { ms: Math.round(performance.now() - started), destroyed };
}

/**
 * Most turns acceptQueued waits for. Each turn accepts all that is queued, so further turns serve
 * only connections still arriving: on a starved CPU the kernel itself completes a handshake late
 * (measured: ~10 ms after the client's connect), and a turn that accepted one is followed by
 * another. The bound: clients answered with `Connection: close` reconnect at once, and keeping the
 * port open for them only moves the race to a later close.
 */
const MAX_ACCEPT_TURNS = 10;

/**
 * Resolves after a turn of the event loop in which no connection was accepted (at most
 * MAX_ACCEPT_TURNS). libuv accepts every queued connection in its poll phase, and a setImmediate
 * callback runs right after that phase; the first turn may share its poll with the caller (a close
 * begun from an I/O callback, a signal), so at least two turns.
 */
async function acceptQueued(server: Server): Promise<void> {
  let accepted = 0;
  const count = () => {
    accepted += 1;
  };
  server.on('connection', count);
  try {
    for (let turn = 0; turn < MAX_ACCEPT_TURNS; turn++) {
      const before = accepted;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (turn > 0 && accepted === before) return;
    }
  } finally {
    server.off('connection', count);
  }
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
