/**
 * The hostile key of bench/tenants/noisy-neighbour.ts: concurrent loops of the heaviest request shapes
 * this api serves, from 127.0.0.2, each loop sending its next request as soon as the previous one
 * is answered (a 429 is not waited out: its Retry-After is ignored, as a careless client does).
 * Bounded: every loop stops at the deadline, and held polls wait at most `waitSeconds`.
 */
import { type Answer, answerCode, type Client, nextLink } from './noisy-neighbour-http.ts';

export const SHAPES = [
  'since-first',
  'since-deep',
  'token-first',
  'token-deep',
  'changes',
  'stream',
  'not-modified',
  'preflight',
  'plain-200',
] as const;
export type ShapeName = (typeof SHAPES)[number];

export interface HostileUrls {
  readonly base: string;
  readonly key: string;
  /** filter[updated_since] as sent: the changed sites' first change time plus the api's overlap. */
  readonly since: string;
  /** Path and query of the token walk's first page. */
  readonly syncPath: string;
  /** The ETag of the since walk's first page (for If-None-Match). */
  readonly etag: string;
  /** A change-feed URL at the feed's end: an empty page, held by `wait`. */
  readonly heldUrl: string;
}

/** What each shape asks; `-deep` shapes and the feed follow links.next and start over at the end. */
export function shapeRequests(
  urls: HostileUrls,
): Record<
  ShapeName,
  { first: string; walk: boolean; method?: string; headers?: Record<string, string>; discard?: boolean }
> {
  const since = `${urls.base}/v1/sites?sort=created_at&limit=200&filter[updated_since]=${urls.since}`;
  const token = `${urls.base}${urls.syncPath}`;
  return {
    'since-first': { first: since, walk: false },
    'since-deep': { first: since, walk: true },
    'token-first': { first: token, walk: false },
    'token-deep': { first: token, walk: true },
    changes: { first: `${urls.base}/v1/changes?limit=200&include[sites]=contacts`, walk: true },
    // The whole company's feed as one NDJSON stream (issue 36), its bytes counted and dropped.
    stream: {
      first: `${urls.base}/v1/changes?include[sites]=contacts`,
      walk: false,
      headers: { accept: 'application/x-ndjson' },
      discard: true,
    },
    'not-modified': { first: since, walk: false, headers: { 'if-none-match': urls.etag } },
    preflight: {
      first: `${urls.base}/v1/sites`,
      walk: false,
      method: 'OPTIONS',
      headers: { origin: 'https://partner.example', 'access-control-request-method': 'GET' },
    },
    'plain-200': { first: `${urls.base}/v1/sites?limit=200&include=contacts`, walk: true },
  };
}

export interface ShapeTally {
  /** Answers by status and problem code ("200", "304", "429 too_many_requests_in_progress", …). */
  readonly answers: Record<string, number>;
  /** ms of the answers that were not refused (2xx, 304). */
  readonly ms: number[];
  /** Rows per 200 page (a budgeted page may hold fewer than its limit, even none). */
  readonly rows: number[];
  readonly errors: string[];
}

export type HostileTally = Record<string, ShapeTally>;

export interface HostileLoad {
  readonly shapes: readonly ShapeName[];
  readonly loops: number;
  /** Concurrent held change-feed polls besides the loops (0 = none). */
  readonly held: number;
  readonly waitSeconds: number;
}

/**
 * Runs `load.loops` loops over `load.shapes` (loop i starts at shape i, then takes them in turn,
 * each walk shape keeping its own position per loop) and `load.held` held polls until `untilMs`
 * (performance.now()); resolves with every answer counted per shape once all have stopped.
 */
export async function runHostile(
  client: Client,
  heldClient: Client,
  urls: HostileUrls,
  load: HostileLoad,
  untilMs: number,
): Promise<HostileTally> {
  const requests = shapeRequests(urls);
  const tally: HostileTally = {};
  const count = (shape: string, answer: Answer | undefined, error?: unknown) => {
    let entry = tally[shape];
    if (entry === undefined) {
      entry = { answers: {}, ms: [], rows: [], errors: [] };
      tally[shape] = entry;
    }
    if (answer === undefined) {
      entry.errors.push(error instanceof Error ? error.message : String(error));
      return;
    }
    const code = answerCode(answer);
    entry.answers[code] = (entry.answers[code] ?? 0) + 1;
    if (answer.status < 400) entry.ms.push(answer.ms);
    if (answer.status === 200 && answer.headers['content-type']?.startsWith('application/json'))
      entry.rows.push((JSON.parse(answer.body) as { data: unknown[] }).data.length);
  };
  const auth = { authorization: `Bearer ${urls.key}` };
  const loop = async (index: number) => {
    const positions = new Map<ShapeName, string>();
    for (let turn = index; performance.now() < untilMs; turn++) {
      const shape = load.shapes[turn % load.shapes.length]!;
      const request = requests[shape];
      const url = positions.get(shape) ?? request.first;
      const headers = request.method === 'OPTIONS' ? { ...request.headers } : { ...auth, ...request.headers };
      try {
        const answer = await client.send(request.method ?? 'GET', url, headers, request.discard === true);
        count(shape, answer);
        if (request.walk && answer.status === 200) positions.set(shape, nextLink(answer) ?? request.first);
      } catch (error) {
        count(shape, undefined, error);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  const heldLoop = async () => {
    const url = `${urls.heldUrl}&wait=${load.waitSeconds}`;
    while (performance.now() + load.waitSeconds * 1000 < untilMs) {
      try {
        count('held', await heldClient.get(url, auth));
      } catch (error) {
        count('held', undefined, error);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  };
  await Promise.all([
    ...Array.from({ length: load.loops }, (_, index) => loop(index)),
    ...Array.from({ length: load.held }, heldLoop),
  ]);
  return tally;
}
