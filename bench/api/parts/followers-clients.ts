/**
 * The feed followers of bench/api/followers.ts, each on its own keep-alive connection bound to its
 * loopback address (http.Agent, one socket, `localAddress`): a long poll follows links.next with
 * `wait` after its first page (as @pda/client's follow once caught up), a live stream reads `live=true` NDJSON and
 * reconnects from its last position line (at the stream's lifetime, or a cut). Each site upsert's
 * name is handed to `onName` with the time its page or line arrived. Refusals are counted by cause
 * and retried after a pause that grows to 5 s, so followers beyond the api's connection bound keep
 * asking without flooding it.
 */
import { Agent, request } from 'node:http';
import { onJsonLines } from '../../shared/ndjson-lines.ts';
import type { FollowerPlan } from './followers-plan.ts';

export interface FollowerCounts {
  /** Answers by status (long-poll pages, stream openings). */
  readonly statuses: Record<string, number>;
  /** Socket errors by code (ECONNRESET: a connection closed on arrival). */
  readonly errors: Record<string, number>;
  /** Long-poll pages, live-stream connections. */
  pages: number;
  streams: number;
}

export interface Follower {
  readonly plan: FollowerPlan;
  /** True once it has had a 200 (a page, or a stream's headers). */
  readonly established: () => boolean;
  stop(): void;
  readonly done: Promise<void>;
}

export interface FollowerOptions {
  readonly base: string;
  readonly apiKey: string;
  readonly plan: FollowerPlan;
  readonly waitSeconds: number;
  readonly counts: FollowerCounts;
  readonly onName: (name: string, at: number) => void;
  readonly nowMs: () => number;
}

const FEED = '/v1/changes?filter[type]=sites&limit=200';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startFollower(options: FollowerOptions): Follower {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let running = true;
  let established = false;
  let current: ReturnType<typeof request> | undefined;
  const count = (table: Record<string, number>, key: string) => {
    table[key] = (table[key] ?? 0) + 1;
  };
  let pause = 0;
  const backOff = async () => {
    pause = Math.min(5_000, pause === 0 ? 250 : pause * 2);
    await sleep(pause);
  };

  /** One request; resolves with the status (0 on a socket error) once its body has ended. */
  const ask = (path: string, stream: boolean) =>
    new Promise<{ status: number; next?: string }>((resolve) => {
      const req = request(`${options.base}${path}`, {
        agent,
        localAddress: options.plan.localAddress,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          'accept-encoding': 'identity',
          ...(stream ? { accept: 'application/x-ndjson' } : {}),
        },
      });
      current = req;
      req.on('error', (error: NodeJS.ErrnoException) => {
        count(options.counts.errors, error.code ?? error.message);
        resolve({ status: 0 });
      });
      req.on('response', (response) => {
        const status = response.statusCode ?? 0;
        count(options.counts.statuses, String(status));
        if (status !== 200) {
          response.resume();
          response.on('end', () => resolve({ status }));
          return;
        }
        established = true;
        pause = 0;
        let next: string | undefined;
        if (stream) {
          options.counts.streams += 1;
          onJsonLines<{ op: string; data?: { name?: string }; links?: { next: string } }>(
            response,
            (line) => {
              if (line.op === 'upsert' && line.data?.name) options.onName(line.data.name, options.nowMs());
              else if (line.op === 'position' && line.links) next = line.links.next;
            },
          );
        } else {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const at = options.nowMs();
            options.counts.pages += 1;
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              data: { op: string; data?: { name?: string } }[];
              links: { next: string };
            };
            for (const change of body.data)
              if (change.op === 'upsert' && change.data?.name) options.onName(change.data.name, at);
            next = body.links.next;
          });
        }
        response.on('error', () => resolve({ status: 0 }));
        response.on('end', () => resolve({ status, ...(next ? { next } : {}) }));
        response.on('close', () => resolve({ status, ...(next ? { next } : {}) }));
      });
      req.end();
    });

  const relative = (link: string) => {
    const url = new URL(link);
    return `${url.pathname}${url.search}`;
  };

  const done = (async () => {
    const live = options.plan.kind === 'live-stream';
    // A long poll's first page comes at once (no `wait` before it is caught up, as client.follow
    // does), so a follower counts as in before any change; its links then keep the `wait` added
    // once. A stream's position links carry no `live`.
    let path = live ? `${FEED}&live=true` : FEED;
    while (running) {
      const { status, next } = await ask(path, live);
      if (!running) break;
      if (next) {
        const url = relative(next);
        if (live) path = url.includes('live=') ? url : `${url}&live=true`;
        else path = url.includes('wait=') ? url : `${url}&wait=${options.waitSeconds}`;
      }
      if (status !== 200) await backOff();
    }
    agent.destroy();
  })();

  return {
    plan: options.plan,
    established: () => established,
    stop: () => {
      running = false;
      current?.destroy();
    },
    done,
  };
}

export const newCounts = (): FollowerCounts => ({ statuses: {}, errors: {}, pages: 0, streams: 0 });
