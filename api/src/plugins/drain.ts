import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import { drainConnections } from '../connections/drain.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Runs `listener` when the api starts closing, before it waits for its connections to end: a
     * request that would otherwise keep its connection open past the drain answers there (the
     * change feed's held requests).
     */
    beforeDrain(listener: () => void): void;
  }
}

/**
 * On close, before Fastify closes the server (preClose): stop accepting connections and wait for
 * the open ones to end by themselves, at most API_DRAIN_TIMEOUT_MS (connections/drain.ts). Meanwhile
 * requests are answered as usual, each with `Connection: close`, so that its connection ends with
 * it (buildApp sets return503OnClosing: false: Fastify's 503 would fail requests this process can
 * still answer).
 * One log line says how long it took and how many connections were cut.
 */
export default fp(
  async (app, options: AppOptions) => {
    const listeners: Array<() => void> = [];
    let draining = false;
    app.decorate('beforeDrain', (listener: () => void) => {
      listeners.push(listener);
    });
    // Fastify says `Connection: close` itself only to requests routed after the close began; one
    // already in its handler (a held change-feed request) would leave its connection open.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (draining) reply.header('connection', 'close');
      return payload;
    });
    app.addHook('preClose', async () => {
      draining = true;
      for (const listener of listeners) listener();
      if (!app.server.listening) return;
      const outcome = await drainConnections(app.server, options.config.drainTimeoutMs);
      const line = { drainMs: outcome.ms, connectionsCut: outcome.destroyed };
      if (outcome.destroyed > 0)
        app.log.warn(line, 'connections still open after API_DRAIN_TIMEOUT_MS were closed');
      else app.log.info(line, 'connections drained');
    });
  },
  { name: 'pda-drain', fastify: '5.x' },
);
