import { Agent, type Dispatcher } from 'undici';
import { HOP_REQUEST_ID_HEADER } from './hop.ts';

/**
 * The undici agent of the hops to the owners (plugins/forward.ts), able to abort a hop when the
 * partner's connection closes. @fastify/reply-from builds its undici requests without a signal
 * and takes any object with a `request` method as its agent: this one adds the signal registered
 * for the hop's request id (HOP_REQUEST_ID_HEADER, set on every hop). An aborted hop closes its
 * connection to the owner, so the owner ends the request at once (a held change-feed request gives
 * its slot back) instead of answering nobody when its `wait` ends.
 */

export interface HopDispatcher {
  /** What @fastify/reply-from is given as its `undici` option. */
  readonly agent: Pick<Dispatcher, 'request' | 'close' | 'destroy'>;
  /** Aborts the hop of request `id` on `signal`, until `signal` is forgotten (the request ended). */
  track(id: string, signal: AbortSignal): () => void;
}

export function hopDispatcher(options: Agent.Options): HopDispatcher {
  const agent = new Agent(options);
  const signals = new Map<string, AbortSignal>();
  const request = ((opts: Dispatcher.RequestOptions, callback: never) => {
    const id = headerOf(opts.headers, HOP_REQUEST_ID_HEADER);
    const signal = id === undefined ? undefined : signals.get(id);
    return agent.request(signal === undefined ? opts : { ...opts, signal }, callback);
  }) as Dispatcher['request'];
  return {
    agent: {
      request,
      close: agent.close.bind(agent) as Dispatcher['close'],
      destroy: agent.destroy.bind(agent) as Dispatcher['destroy'],
    },
    track(id, signal) {
      signals.set(id, signal);
      return () => {
        if (signals.get(id) === signal) signals.delete(id);
      };
    },
  };
}

/** reply-from passes the headers as a plain object with lower-case names. */
function headerOf(headers: Dispatcher.RequestOptions['headers'], name: string): string | undefined {
  if (headers === null || headers === undefined || Array.isArray(headers)) return undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}
