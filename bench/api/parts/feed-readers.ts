/**
 * The two ways bench/api/feed-stream.ts copies a company through the change feed, each doing what a
 * partner's program must (every item parsed): pages followed by links.next, and one stream read
 * line by line. Both count requests, bytes on the wire and items.
 */
import { get as httpGet } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createZstdDecompress } from 'node:zlib';
import { createClient } from '@pda/client';
import { onJsonLines } from '../../shared/ndjson-lines.ts';

export interface Copied {
  readonly items: number;
  readonly requests: number;
  readonly wireBytes: number;
  readonly seconds: number;
  /** The Content-Encoding the api answered with ('identity' when none). */
  readonly coding: string;
}

/**
 * Pages of 200 with @pda/client's follow (until caught up), over a fetch that counts the requests
 * and their Content-Length (the bytes as sent: compressed when the api compressed them).
 */
export async function copyPaged(base: string, key: string, acceptEncoding: string): Promise<Copied> {
  let requests = 0;
  let wireBytes = 0;
  let coding = 'identity';
  const counting: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('accept-encoding', acceptEncoding);
    const response = await fetch(input, { ...init, headers });
    requests += 1;
    wireBytes += Number(response.headers.get('content-length') ?? 0);
    coding = response.headers.get('content-encoding') ?? 'identity';
    return response;
  };
  const client = createClient({ baseUrl: base, apiKey: key, fetch: counting });
  const started = performance.now();
  let items = 0;
  for await (const page of client.follow({ limit: 200, untilCaughtUp: true })) items += page.changes.length;
  return { items, requests, wireBytes, seconds: (performance.now() - started) / 1000, coding };
}

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  br: createBrotliDecompress,
  zstd: createZstdDecompress,
};

/** The feed from its start as one NDJSON stream, each line parsed; ends at its last position line. */
export function copyStreamed(base: string, key: string, acceptEncoding: string): Promise<Copied> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpGet(`${base}/v1/changes`, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'application/x-ndjson',
        'accept-encoding': acceptEncoding,
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`the stream answered ${response.statusCode}`));
        return;
      }
      const coding = String(response.headers['content-encoding'] ?? 'identity');
      let wireBytes = 0;
      response.on('data', (chunk: Buffer) => {
        wireBytes += chunk.length;
      });
      const decoder = DECODERS[coding];
      const body = decoder ? response.pipe(decoder()) : response;
      let items = 0;
      let last: { op: string; caught_up?: boolean } | undefined;
      onJsonLines<{ op: string; caught_up?: boolean }>(body, (line) => {
        last = line;
        if (line.op === 'upsert' || line.op === 'delete') items += 1;
      });
      body.on('error', reject);
      body.on('end', () => {
        if (last?.op !== 'position' || last.caught_up !== true)
          reject(
            new Error(`the stream ended without its caught-up position (last line: ${JSON.stringify(last)})`),
          );
        else
          resolve({ items, requests: 1, wireBytes, seconds: (performance.now() - started) / 1000, coding });
      });
    });
  });
}
