// A steady request load of partners paging through a collection with their own API key
// (links.next until null, then from the start again), each request recorded: status, the node that
// answered (the balancer's X-PDA-Node header) and any failure. Used by the replica test and by the
// fault campaign's api case, which also checks every complete walk (every id exactly once: no page
// lost or repeated across a cursor) against the ids it expects, and may retry network errors and
// 5xx as @pda/client does (client/src/retry.ts). Plain node:http with a keep-alive agent per
// client, so a client can also choose the local address it connects from (127.0.0.0/8 is all local
// on Linux): the api's per-address budgets can then be told apart.
import { type Agent, Agent as HttpAgent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One GET; rejects on a network error (connection refused or reset, no answer). */
export function get(
  url: string,
  options: {
    headers?: Record<string, string>;
    localAddress?: string;
    agent?: Agent;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        headers: options.headers,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        agent: options.agent ?? false,
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within the timeout')));
    req.on('error', reject);
    req.end();
  });
}

export interface Failure {
  readonly at: number;
  readonly client: number;
  readonly url: string;
  /** The status and the start of the body, or the network error's message. */
  readonly what: string;
}

/** One complete walk, checked against the expected ids (when the load was given them). */
export interface PassResult {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly ids: number;
  readonly duplicates: number;
  readonly missing: number;
  readonly unexpected: number;
}

export interface LoadSummary {
  /** Every request sent, retries included. */
  readonly requests: number;
  /** Requests that ended without a 200, after the retries: `failures.length`. */
  readonly failed: number;
  readonly failures: Failure[];
  /** The failures by kind: 'status <n>' or the network error's code. */
  readonly failuresByKind: Record<string, number>;
  /** Of the failures, the answers 4xx (a cursor or key refused, a budget exceeded): they end the walk. */
  readonly refused: number;
  /** Requests sent again after a network error or a 5xx (only with `attempts` above 1). */
  readonly retries: number;
  readonly byNode: Record<string, number>;
  readonly byStatus: Record<string, number>;
  /** Walks that reached links.next = null. */
  readonly walksCompleted: number;
  /** Each completed walk against `expectedIds`; empty without them. */
  readonly passes: PassResult[];
}

export interface PagingLoad {
  /** What has been recorded so far. */
  summary(): LoadSummary;
  /** Requests answered by `node` since `sinceMs` (epoch ms). */
  answeredBy(node: string, sinceMs: number): number;
  stop(): Promise<LoadSummary>;
}

export interface PagingLoadOptions {
  readonly baseUrl: string;
  /** One client per key, each paging with its own key. */
  readonly keys: readonly string[];
  /** The first page of a walk (default `/v1/sites?limit=20`). */
  readonly path?: string;
  /** The pause after each page and after a failure (default 200 ms). */
  readonly pauseMs?: number;
  /** 1 (default): each request sent once; more: network errors and 5xx retried with a short backoff. */
  readonly attempts?: number;
  /** When given, every completed walk is checked against them (`passes`). */
  readonly expectedIds?: ReadonlySet<string>;
  /** stop() lets each client finish the walk it is on (so that walk counts) instead of stopping after the current request. */
  readonly finishWalkOnStop?: boolean;
}

/**
 * `keys.length` clients paging `path` on `baseUrl`. Anything but a 200 (after the retries) is a
 * failure (a 429 too: the budget is sized above this load) and starts the walk again.
 */
export function startPagingLoad(options: PagingLoadOptions): PagingLoad {
  const { baseUrl, keys, expectedIds } = options;
  const { path = '/v1/sites?limit=20', pauseMs = 200, attempts = 1, finishWalkOnStop = false } = options;
  let stopped = false;
  const byNode: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const failures: Failure[] = [];
  const failuresByKind: Record<string, number> = {};
  const answers: { at: number; node: string }[] = [];
  const passes: PassResult[] = [];
  let requests = 0;
  let refused = 0;
  let retries = 0;
  let walksCompleted = 0;
  const agents = keys.map(() => new HttpAgent({ keepAlive: true, maxSockets: 1 }));
  const fail = (failure: Failure, kind: string) => {
    failures.push(failure);
    failuresByKind[kind] = (failuresByKind[kind] ?? 0) + 1;
  };

  /** One GET with the load's retries: the 200's body, or undefined when it failed for good. */
  const page = async (index: number, url: string): Promise<string | undefined> => {
    const headers = { authorization: `Bearer ${keys[index]}` };
    for (let attempt = 1; ; attempt++) {
      requests += 1;
      const at = Date.now();
      let failure: Failure;
      let kind: string;
      try {
        const answer = await get(url, { headers, agent: agents[index]! });
        const node = String(answer.headers['x-pda-node'] ?? 'none');
        byNode[node] = (byNode[node] ?? 0) + 1;
        byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
        answers.push({ at, node });
        if (answer.status === 200) return answer.body;
        failure = { at, client: index, url, what: `${answer.status} ${answer.body.slice(0, 200)}` };
        kind = `status ${answer.status}`;
        if (answer.status < 500) {
          refused += 1;
          fail(failure, kind);
          return undefined;
        }
      } catch (error) {
        byStatus.network = (byStatus.network ?? 0) + 1;
        failure = { at, client: index, url, what: (error as Error).message };
        kind = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      }
      if (attempt >= attempts) {
        fail(failure, kind);
        return undefined;
      }
      retries += 1;
      await sleep(100 * 2 ** (attempt - 1));
    }
  };

  const client = async (index: number) => {
    while (!stopped) {
      const startedAt = Date.now();
      const seen = new Map<string, number>();
      let url: string | null = `${baseUrl}${path}`;
      let complete = true;
      while (url && (finishWalkOnStop || !stopped)) {
        const body = await page(index, url);
        if (body === undefined) {
          complete = false;
          await sleep(pauseMs);
          break;
        }
        const parsed = JSON.parse(body) as { data?: { id: string }[]; links?: { next?: string | null } };
        for (const { id } of parsed.data ?? []) seen.set(id, (seen.get(id) ?? 0) + 1);
        url = parsed.links?.next ?? null;
        await sleep(pauseMs);
      }
      if (!complete || url) continue;
      walksCompleted += 1;
      if (expectedIds) {
        passes.push({
          startedAt,
          endedAt: Date.now(),
          ids: seen.size,
          duplicates: [...seen.values()].filter((n) => n > 1).length,
          missing: [...expectedIds].filter((id) => !seen.has(id)).length,
          unexpected: [...seen.keys()].filter((id) => !expectedIds.has(id)).length,
        });
      }
    }
  };

  const summary = (): LoadSummary => ({
    requests,
    failed: failures.length,
    failures: [...failures],
    failuresByKind: { ...failuresByKind },
    refused,
    retries,
    byNode: { ...byNode },
    byStatus: { ...byStatus },
    walksCompleted,
    passes: [...passes],
  });
  const running = keys.map((_, index) => client(index));
  return {
    summary,
    answeredBy: (node, sinceMs) => answers.filter((a) => a.node === node && a.at >= sinceMs).length,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
      for (const agent of agents) agent.destroy();
      return summary();
    },
  };
}
