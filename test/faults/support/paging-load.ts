// Partners paging through a collection while something happens to the api: each loop requests the
// first page of `GET /v1/sites` and follows `links.next` to the end, again and again, and checks
// every pass (every id exactly once: no page lost or repeated across a cursor) against the ids the
// test expects. A loop either sends each request once (`attempts: 1`, what a failed request costs
// a client that does not retry) or retries network errors and 5xx like @pda/client does
// (client/src/retry.ts) and counts its retries.
import { setTimeout as sleep } from 'node:timers/promises';

export interface PassResult {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly ids: number;
  readonly duplicates: number;
  readonly missing: number;
  readonly unexpected: number;
}

export interface LoadFigures {
  readonly requests: number;
  /** Requests that got no answer or a 5xx (after retries when the loop retries). */
  readonly failed: number;
  /** Failures by kind: the error's code or 'status <n>'. */
  readonly failures: Record<string, number>;
  /** Answers other than 200 and 5xx: a cursor refused (4xx) ends that pass and counts here. */
  readonly cursorErrors: number;
  readonly retries: number;
  readonly passes: PassResult[];
}

export interface PagingLoad {
  stop(): Promise<LoadFigures>;
}

export function startPagingLoad(options: {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly expectedIds: ReadonlySet<string>;
  readonly limit: number;
  readonly pauseMs: number;
  /** 1 = never retry; more = retry network errors and 5xx with a short backoff. */
  readonly attempts: number;
}): PagingLoad {
  let stopping = false;
  let requests = 0;
  let failed = 0;
  let cursorErrors = 0;
  let retries = 0;
  const failures: Record<string, number> = {};
  const passes: PassResult[] = [];
  const fail = (kind: string) => {
    failures[kind] = (failures[kind] ?? 0) + 1;
  };

  /** One GET with the loop's retries; undefined when it failed for good. */
  async function get(
    url: string,
  ): Promise<{ data: Array<{ id: string }>; links: { next: string | null } } | undefined> {
    for (let attempt = 1; ; attempt++) {
      requests += 1;
      let kind: string;
      try {
        const response = await fetch(url, { headers: { authorization: `Bearer ${options.apiKey}` } });
        if (response.ok) return (await response.json()) as never;
        await response.arrayBuffer();
        if (response.status < 500) {
          cursorErrors += 1;
          fail(`status ${response.status}`);
          return undefined;
        }
        kind = `status ${response.status}`;
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        kind = cause?.code ?? (error as Error).message;
      }
      if (attempt >= options.attempts) {
        failed += 1;
        fail(kind);
        return undefined;
      }
      retries += 1;
      await sleep(100 * 2 ** (attempt - 1));
    }
  }

  const loop = (async () => {
    while (!stopping) {
      const startedAt = Date.now();
      const seen = new Map<string, number>();
      let url: string | null = `${options.baseUrl}/v1/sites?limit=${options.limit}`;
      let complete = true;
      while (url) {
        const page = await get(url);
        if (!page) {
          complete = false;
          break;
        }
        for (const { id } of page.data) seen.set(id, (seen.get(id) ?? 0) + 1);
        url = page.links.next;
        await sleep(options.pauseMs);
      }
      if (!complete) {
        await sleep(options.pauseMs);
        continue;
      }
      passes.push({
        startedAt,
        endedAt: Date.now(),
        ids: seen.size,
        duplicates: [...seen.values()].filter((n) => n > 1).length,
        missing: [...options.expectedIds].filter((id) => !seen.has(id)).length,
        unexpected: [...seen.keys()].filter((id) => !options.expectedIds.has(id)).length,
      });
    }
  })();

  return {
    async stop() {
      stopping = true;
      await loop;
      return { requests, failed, failures, cursorErrors, retries, passes };
    },
  };
}
