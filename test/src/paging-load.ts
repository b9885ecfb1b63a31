// A steady request load for the replica test: a few partners paging through a collection with
// their own API key (links.next until null, then from the start again), each request recorded —
// status, the node that answered (the balancer's X-PDA-Node header) and any failure. Plain
// node:http with a keep-alive agent, so a client can also choose the local address it connects from
// (127.0.0.0/8 is all local on Linux): the api's per-address budgets can then be told apart.
import { type Agent, Agent as HttpAgent, request as httpRequest } from 'node:http';

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
  /** The status, or the network error's message. */
  readonly what: string;
}

export interface LoadSummary {
  readonly requests: number;
  readonly failed: number;
  readonly byNode: Record<string, number>;
  readonly byStatus: Record<string, number>;
  readonly failures: Failure[];
  /** Walks that reached links.next = null. */
  readonly walksCompleted: number;
}

export interface PagingLoad {
  /** What has been recorded so far. */
  summary(): LoadSummary;
  /** Requests answered by `node` since `sinceMs` (epoch ms). */
  answeredBy(node: string, sinceMs: number): number;
  stop(): Promise<LoadSummary>;
}

/**
 * `keys.length` clients, each with its key, paging `path` on `baseUrl` with a pause between
 * requests. Anything but a 200 is a failure (a 429 too: the budget is sized above this load).
 */
export function startPagingLoad(
  baseUrl: string,
  keys: readonly string[],
  { path = '/v1/sites?limit=20', pauseMs = 200 }: { path?: string; pauseMs?: number } = {},
): PagingLoad {
  let stopped = false;
  const byNode: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const failures: Failure[] = [];
  const answers: { at: number; node: string }[] = [];
  let requests = 0;
  let walksCompleted = 0;
  const agents = keys.map(() => new HttpAgent({ keepAlive: true, maxSockets: 1 }));

  const client = async (index: number) => {
    const headers = { authorization: `Bearer ${keys[index]}` };
    let url = `${baseUrl}${path}`;
    while (!stopped) {
      requests += 1;
      const at = Date.now();
      try {
        const answer = await get(url, { headers, agent: agents[index]! });
        const node = String(answer.headers['x-pda-node'] ?? 'none');
        byNode[node] = (byNode[node] ?? 0) + 1;
        byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
        answers.push({ at, node });
        if (answer.status !== 200) {
          failures.push({ at, client: index, url, what: `${answer.status} ${answer.body.slice(0, 200)}` });
          url = `${baseUrl}${path}`;
        } else {
          const next = (JSON.parse(answer.body) as { links?: { next?: string | null } }).links?.next;
          if (next) url = next;
          else {
            walksCompleted += 1;
            url = `${baseUrl}${path}`;
          }
        }
      } catch (error) {
        byStatus.network = (byStatus.network ?? 0) + 1;
        failures.push({ at, client: index, url, what: (error as Error).message });
        url = `${baseUrl}${path}`;
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };

  const summary = (): LoadSummary => ({
    requests,
    failed: failures.length,
    byNode: { ...byNode },
    byStatus: { ...byStatus },
    failures: [...failures],
    walksCompleted,
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
