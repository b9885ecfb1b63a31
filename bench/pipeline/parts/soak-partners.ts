/**
 * The partners of a soak (pipeline/soak.ts), each a loop until `signal` aborts, speaking HTTP to
 * the api as a partner's program would (fetch, one connection pool): a pager walking a list with
 * its cursors, a token sync of services (a full export, then `links.sync` every few seconds), a
 * poll with If-None-Match of a busy and a quiet company (304 while nothing changed), followers of
 * the change feed with `wait`, and one live NDJSON stream that reconnects from its last position.
 * Each answer is counted in the tally; a 410 (the company was rebuilt) starts that partner's walk
 * again, as the partner guide says; a failed connection (the api restarting) is retried after a
 * second. None of them stops on an error: the soak must ride out the rebuild and the restart.
 */
import type { Tally } from './soak-tally.ts';
import type { SoakCompany } from './soak-writer.ts';

export interface PartnerContext {
  /** The api's base URL (the same across its restart). */
  readonly base: string;
  readonly tally: Tally;
  readonly signal: AbortSignal;
}

interface Page {
  data: unknown[];
  meta: { page: { has_more: boolean } };
  links: { next: string | null; sync?: string };
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** One request; null when no answer came (counted as `network`) or the partner is stopping. */
async function call(
  ctx: PartnerContext,
  kind: string,
  company: SoakCompany,
  url: string,
  headers: Record<string, string> = {},
): Promise<Response | null> {
  try {
    const response = await fetch(url.startsWith('http') ? url : `${ctx.base}${url}`, {
      headers: { authorization: `Bearer ${company.key}`, ...headers },
      signal: ctx.signal,
    });
    ctx.tally.record(
      kind,
      company.id,
      response.status,
      response.status >= 500 ? await response.clone().text() : '',
    );
    return response;
  } catch (error) {
    if (!ctx.signal.aborted)
      ctx.tally.record(
        kind,
        company.id,
        'network',
        String(error instanceof Error ? (error.cause ?? error.message) : error),
      );
    return null;
  }
}

/** A body read to its end (or nothing when the connection broke meanwhile). */
async function json(response: Response): Promise<Page | null> {
  try {
    return (await response.json()) as Page;
  } catch {
    return null;
  }
}

/** Walks `/v1/sites` of each company in turn, 50 a page along links.next, a page every `pauseMs`. */
export async function pager(
  ctx: PartnerContext,
  companies: readonly SoakCompany[],
  pauseMs = 500,
): Promise<void> {
  for (let i = 0; !ctx.signal.aborted; i++) {
    const company = companies[i % companies.length] as SoakCompany;
    let url: string | null = '/v1/sites?limit=50';
    while (url && !ctx.signal.aborted) {
      const response = await call(ctx, 'pager', company, url);
      const page = response?.ok ? await json(response) : null;
      await pause(pauseMs, ctx.signal);
      if (response === null) await pause(1000, ctx.signal);
      if (response !== null && response.status !== 200) break; // a 410 or 503: start this walk again
      if (page !== null) url = page.links.next;
    }
  }
}

/** Every page of a walk from `url`; the last page's links.sync, or the status that ended it. */
async function walk(
  ctx: PartnerContext,
  kind: string,
  company: SoakCompany,
  url: string,
): Promise<string | number> {
  let next: string | null = url;
  while (next && !ctx.signal.aborted) {
    const response = await call(ctx, kind, company, next);
    if (response === null) return 0;
    if (response.status !== 200) return response.status;
    const page = await json(response);
    if (page === null) return 0;
    if (page.links.next === null) return page.links.sync ?? 0;
    next = page.links.next;
  }
  return 0;
}

/** Per company: a full export of services, then its `links.sync` every `everyMs` (a 410: export again). */
export async function tokenSync(ctx: PartnerContext, company: SoakCompany, everyMs = 5_000): Promise<void> {
  let sync: string | undefined;
  while (!ctx.signal.aborted) {
    const ended = await walk(ctx, 'token sync', company, sync ?? '/v1/services?limit=100');
    if (typeof ended === 'string') sync = ended;
    else if (ended === 410) sync = undefined;
    await pause(typeof ended === 'string' ? everyMs : 1000, ctx.signal);
  }
}

/** The first page of a company's sites sync URL, asked again every `everyMs` with its ETag. */
export async function etagPoll(ctx: PartnerContext, company: SoakCompany, everyMs = 1_000): Promise<void> {
  let sync: string | undefined;
  let etag: string | undefined;
  while (!ctx.signal.aborted) {
    if (sync === undefined) {
      const ended = await walk(ctx, '304 poll', company, '/v1/sites?limit=200');
      if (typeof ended === 'string') sync = ended;
      etag = undefined;
    } else {
      const response = await call(ctx, '304 poll', company, sync, etag ? { 'if-none-match': etag } : {});
      if (response?.status === 200) etag = response.headers.get('etag') ?? undefined;
      if (response?.status === 410) sync = undefined;
      await response?.arrayBuffer().catch(() => {});
    }
    await pause(everyMs, ctx.signal);
  }
}

/** A follower of the change feed: pages of 200 from the start, then `wait` pages once caught up. */
export async function feedFollower(
  ctx: PartnerContext,
  company: SoakCompany,
  waitSeconds = 10,
): Promise<void> {
  let url = '/v1/changes?limit=200';
  let caughtUp = false;
  while (!ctx.signal.aborted) {
    const asked: string = caughtUp ? `${url}${url.includes('?') ? '&' : '?'}wait=${waitSeconds}` : url;
    const response = await call(ctx, 'feed follower', company, asked);
    const page = response?.status === 200 ? await json(response) : null;
    if (page === null) {
      if (response?.status === 410) {
        url = '/v1/changes?limit=200';
        caughtUp = false;
      }
      await response?.arrayBuffer().catch(() => {});
      await pause(1000, ctx.signal);
      continue;
    }
    const next = new URL(page.links.next as string);
    next.searchParams.delete('wait');
    url = `${next.pathname}${next.search}`;
    caughtUp = !page.meta.page.has_more;
  }
}

interface StreamLine {
  op: string;
  links?: { next: string };
  error?: { code: string };
}

/** Counters of the live stream: connections opened, changes and heartbeats received. */
export interface StreamCounts {
  connections: number;
  changes: number;
  heartbeats: number;
  errorLines: number;
}

/** One `live=true` NDJSON stream of the feed, reconnected from its last position line whenever it ends. */
export async function liveStream(
  ctx: PartnerContext,
  company: SoakCompany,
  counts: StreamCounts,
): Promise<void> {
  const start = '/v1/changes?live=true';
  let position: string | undefined;
  while (!ctx.signal.aborted) {
    const url = position ? `${position}${position.includes('live=true') ? '' : '&live=true'}` : start;
    const response = await call(ctx, 'live stream', company, url, { accept: 'application/x-ndjson' });
    if (response === null || response.status !== 200 || response.body === null) {
      if (response?.status === 410) position = undefined;
      await response?.arrayBuffer().catch(() => {});
      await pause(1000, ctx.signal);
      continue;
    }
    counts.connections++;
    let rest = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
        rest = lines.pop() ?? '';
        for (const text of lines) {
          if (text === '') continue;
          const line = JSON.parse(text) as StreamLine;
          if (line.op === 'position' && line.links) position = line.links.next;
          else if (line.op === 'heartbeat') counts.heartbeats++;
          else if (line.op === 'error') {
            counts.errorLines++;
            if (line.error?.code === 'sync_window_expired') position = undefined;
          } else counts.changes++;
        }
      }
    } catch (error) {
      // Cut mid-stream (the api restarting): resume from the last position line.
      if (!ctx.signal.aborted) ctx.tally.record('live stream', company.id, 'network', String(error));
      await pause(1000, ctx.signal);
    }
  }
}
