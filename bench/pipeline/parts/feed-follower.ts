import { randomBytes } from 'node:crypto';
import { buildApp, parseConfig } from '@pda/api';
import { issueApiKey } from '@pda/operator-tools/keys';
import type pg from 'pg';

/**
 * The change feed's share of freshness (pipeline/freshness.ts): an api on the benchmark's data directory
 * and a partner following `GET /v1/changes?filter[type]=sites` on it, as client.follow does (pages
 * of 200 along links.next, `wait=5` once caught up), calling `onName` with each site upsert's name
 * and the time its page arrived. Requests go through `app.inject` (the api's whole request path,
 * without a socket).
 */
export interface FeedFollower {
  /** Pages answered (held ones included). */
  readonly pages: () => number;
  stop(): Promise<void>;
}

export async function followSitesFeed(options: {
  readonly dataDir: string;
  readonly pool: pg.Pool;
  readonly companyId: string;
  readonly onName: (name: string, at: number) => void;
  readonly nowMs: () => number;
}): Promise<FeedFollower> {
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
  await app.ready();
  let running = true;
  let pages = 0;
  const headers = { authorization: `Bearer ${key}` };
  const loop = (async () => {
    let url = '/v1/changes?filter[type]=sites&limit=200';
    let caughtUp = false;
    while (running) {
      const response = await app.inject({ url: caughtUp ? `${url}&wait=5` : url, headers });
      const at = options.nowMs();
      if (response.statusCode !== 200) {
        // The key or the company not projected yet (401, 503): ask again shortly.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      pages += 1;
      const body = response.json() as {
        data: { op: string; data?: { name?: string } }[];
        meta: { page: { has_more: boolean } };
        links: { next: string };
      };
      for (const change of body.data) {
        if (change.op === 'upsert' && change.data?.name) options.onName(change.data.name, at);
      }
      const next = new URL(body.links.next);
      next.searchParams.delete('wait');
      url = `${next.pathname}${next.search}`;
      caughtUp = !body.meta.page.has_more;
    }
  })();
  return {
    pages: () => pages,
    stop: async () => {
      running = false;
      await app.close(); // answers a held request at once
      await loop;
    },
  };
}
