import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp, parseConfig } from '@pda/api';
import { issueApiKey } from '@pda/operator-tools/keys';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { onJsonLines } from '../../shared/ndjson-lines.ts';

/**
 * The change feed's share of freshness (pipeline/freshness.ts): an api on the benchmark's data
 * directory and two partners following `GET /v1/changes?filter[type]=sites` on it, calling `onName`
 * with each site upsert's name and the time it arrived:
 * - `poll`: as client.follow does (pages of 200 along links.next, `wait=5` once caught up), through
 *   `app.inject` (the api's whole request path, without a socket);
 * - `live`: one live NDJSON stream (`live=true`) over a loopback socket, each line as it comes.
 */
export interface FeedFollower {
  /** Pages answered (held ones included) by the polling partner. */
  readonly pages: () => number;
  stop(): Promise<void>;
}

export interface FollowOptions {
  readonly dataDir: string;
  readonly pool: pg.Pool;
  readonly companyId: string;
  readonly onName: (follower: 'poll' | 'live', name: string, at: number) => void;
  readonly nowMs: () => number;
}

interface Change {
  op: string;
  data?: { name?: string };
}

export async function followSitesFeed(options: FollowOptions): Promise<FeedFollower> {
  const db = await options.pool.connect();
  let key: string;
  try {
    key = (
      await issueApiKey(db, {
        companyIds: [options.companyId],
        name: 'bench freshness feed',
        scopes: ['sites:read'],
      })
    ).key;
  } finally {
    db.release();
  }
  const app = await buildApp(
    parseConfig({
      API_DATA_DIR: options.dataDir,
      API_CURSOR_SECRET: randomBytes(32).toString('hex'),
      API_RATE_LIMIT_MAX: '100000000',
      API_REOPEN_CHECK_MS: '0',
      API_LOG_LEVEL: 'warn',
    }),
    { logger: false },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const headers = { authorization: `Bearer ${key}` };
  const state = { running: true, pages: 0 };
  const polling = pollLoop(app, headers, options, state);
  const live = liveStream(app, headers, options);
  return {
    pages: () => state.pages,
    stop: async () => {
      state.running = false;
      live.destroy();
      await app.close(); // answers a held request at once
      await polling;
    },
  };
}

async function pollLoop(
  app: FastifyInstance,
  headers: Record<string, string>,
  options: FollowOptions,
  state: { running: boolean; pages: number },
): Promise<void> {
  let url = '/v1/changes?filter[type]=sites&limit=200';
  let caughtUp = false;
  while (state.running) {
    const response = await app.inject({ url: caughtUp ? `${url}&wait=5` : url, headers });
    const at = options.nowMs();
    if (response.statusCode !== 200) {
      // The key or the company not projected yet (401, 503): ask again shortly.
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    state.pages += 1;
    const body = response.json() as {
      data: Change[];
      meta: { page: { has_more: boolean } };
      links: { next: string };
    };
    for (const change of body.data) {
      if (change.op === 'upsert' && change.data?.name) options.onName('poll', change.data.name, at);
    }
    const next = new URL(body.links.next);
    next.searchParams.delete('wait');
    url = `${next.pathname}${next.search}`;
    caughtUp = !body.meta.page.has_more;
  }
}

/** One live stream from the feed's start; reconnects (from the start) while the key is not known yet. */
function liveStream(app: FastifyInstance, headers: Record<string, string>, options: FollowOptions) {
  const { port } = app.server.address() as AddressInfo;
  let stopped = false;
  let current: ReturnType<typeof request> | undefined;
  const open = () => {
    if (stopped) return;
    current = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/changes?filter[type]=sites&limit=200&live=true',
        headers: { ...headers, accept: 'application/x-ndjson' },
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          setTimeout(open, 100);
          return;
        }
        onJsonLines<Change>(response, (line) => {
          if (line.op === 'upsert' && line.data?.name)
            options.onName('live', line.data.name, options.nowMs());
        });
      },
    );
    current.on('error', () => {
      if (!stopped) setTimeout(open, 100);
    });
    current.end();
  };
  open();
  return {
    destroy: () => {
      stopped = true;
      current?.destroy();
    },
  };
}
