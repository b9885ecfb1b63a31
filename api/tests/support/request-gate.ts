import type { FastifyPluginAsync } from 'fastify';

/** The request header that makes a request wait at the gate (it travels on a hop like any other). */
export const GATE_HEADER = 'x-test-gate';

export interface RequestGate {
  /** Given to buildApp (AppDeps.plugins): its preHandler holds every request sending GATE_HEADER. */
  readonly plugin: FastifyPluginAsync;
  /** Requests waiting at the gate now. */
  readonly waiting: () => number;
  /** Lets every waiting request go on (and every later one, until `close` again). */
  open(): void;
  close(): void;
}

/**
 * Keeps chosen requests in progress for as long as a test needs (a slow page, in effect): after
 * authentication and the fair shares' count (preValidation), before the handler. Tests of what a
 * request in progress holds (api/tests/fair-shares.test.ts, api/tests/forward.test.ts).
 */
export function requestGate(): RequestGate {
  let waiters: (() => void)[] = [];
  let opened = false;
  return {
    plugin: async (app) => {
      app.addHook('preHandler', async (request) => {
        if (request.headers[GATE_HEADER] === undefined || opened) return;
        await new Promise<void>((resolve) => waiters.push(resolve));
      });
    },
    waiting: () => waiters.length,
    open() {
      opened = true;
      const released = waiters;
      waiters = [];
      for (const resolve of released) resolve();
    },
    close() {
      opened = false;
    },
  };
}
