/**
 * Commit → partner latency of the change feed, live stream against long poll, for
 * bench/api/feed-stream.ts: this process commits a site rename every `everyMs` into the company's
 * projection file (ProjectionStore.applyBatch, as ingest does) while two followers of the same api
 * wait for it: one `live=true` NDJSON stream, one chain of `wait=30` pages. Each rename's
 * latency is the follower's receive time minus the moment applyBatch returned (committed).
 */
import { get as httpGet } from 'node:http';
import type { Row } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { onJsonLines } from '../../shared/ndjson-lines.ts';

export interface Latencies {
  readonly changes: number;
  readonly streamMs: readonly number[];
  readonly longPollMs: readonly number[];
}

const NAME = 'latency probe ';

export async function measureFeedLatency(options: {
  base: string;
  key: string;
  dataDir: string;
  companyId: string;
  siteId: string;
  changes: number;
  everyMs: number;
}): Promise<Latencies> {
  const { base, key } = options;
  const committedAt = new Map<string, number>();
  const streamMs: number[] = [];
  const longPollMs: number[] = [];
  const seen = (name: string | undefined, into: number[]) => {
    const at = name === undefined ? undefined : committedAt.get(name);
    if (at !== undefined) into.push(performance.now() - at);
  };
  const headers = { authorization: `Bearer ${key}` };
  const caughtUp = await caughtUpPosition(base, headers);
  const stop = new AbortController();
  const stream = followStream(`${caughtUp}&live=true`, headers, (name) => seen(name, streamMs), stop.signal);
  const polls = followLongPoll(`${caughtUp}&wait=30`, headers, (name) => seen(name, longPollMs), stop.signal);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const store = ProjectionStore.open({ dataDir: options.dataDir });
  // Above every earlier run's on the cached fixture (a change at an older position is skipped by
  // the version guard, as ingest's replays are): microseconds of the wall clock.
  let lsn = Date.now() * 1000;
  try {
    for (let n = 1; n <= options.changes; n++) {
      const name = `${NAME}${n}`;
      const row = sampleRow('sites', { id: options.siteId, name, company_id: options.companyId }) as Row;
      store.applyBatch([makeUpsert('sites', row, lsn++, { op: 'u' })]);
      committedAt.set(name, performance.now());
      await new Promise((resolve) => setTimeout(resolve, options.everyMs));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    store.close();
    stop.abort();
  }
  await Promise.allSettled([stream, polls]);
  return { changes: options.changes, streamMs, longPollMs };
}

async function caughtUpPosition(base: string, headers: Record<string, string>): Promise<string> {
  for (let url = `${base}/v1/changes?filter%5Btype%5D=sites&limit=200`; ; ) {
    const page = (await (await fetch(url, { headers })).json()) as {
      meta: { page: { has_more: boolean } };
      links: { next: string };
    };
    if (!page.meta.page.has_more) return page.links.next;
    url = page.links.next;
  }
}

function followStream(
  url: string,
  headers: Record<string, string>,
  onName: (name: string | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const request = httpGet(url, { headers: { ...headers, accept: 'application/x-ndjson' }, signal });
    request.on('error', () => resolve());
    request.on('response', (response) => {
      onJsonLines<{ data?: { name?: string } }>(response, (line) => onName(line.data?.name));
      response.on('end', () => resolve());
      response.on('error', () => resolve());
    });
  });
}

async function followLongPoll(
  url: string,
  headers: Record<string, string>,
  onName: (name: string | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  for (let next = url; !signal.aborted; ) {
    const response = await fetch(next, { headers, signal }).catch(() => undefined);
    if (response === undefined) return;
    const page = (await response.json()) as { data: { data?: { name?: string } }[]; links: { next: string } };
    for (const item of page.data) onName(item.data?.name);
    next = page.links.next;
  }
}
