/**
 * The api of bench/api/followers.ts: the deployable (api/src/main.ts) in a child process under
 * `prlimit --nofile=N:N` (shared/api-processes.ts), with the held-request and stream bounds raised
 * to hold the run's followers, and what it costs while they follow: RSS and open descriptors from
 * /proc, the V8 heap, held requests and refusals from its /metrics (admin port).
 */
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import { answersHealth, benchApiEnv, type Server, startServer } from '../../shared/api-processes.ts';
import { repoRoot } from '../../shared/paths.ts';
import { processStats } from '../../shared/process-stats.ts';

/**
 * The settings raised over the shipped defaults to hold `followers` followers on `keys` keys
 * (api/README.md, Configuration): every held request and stream fits in the process's and each
 * key's share, with room for the ones being answered; in-progress shares off, since a commit wakes
 * every follower of its company at once. Everything else is the shipped default.
 */
export function followerSettings(followers: number, keys: number): Record<string, string> {
  const perKey = Math.ceil(followers / keys) + 10;
  return {
    API_MAX_HELD_REQUESTS: String(followers + 100),
    API_MAX_HELD_REQUESTS_PER_KEY: String(perKey),
    API_MAX_STREAMS_PER_KEY: String(perKey),
    API_MAX_IN_PROGRESS_PER_KEY: '0',
    API_MAX_IN_PROGRESS_PER_COMPANY: '0',
  };
}

export interface ApiSample {
  readonly rssMb: number;
  readonly heapUsedMb: number | null;
  readonly openFds: number;
  readonly heldRequests: number | null;
  readonly cpuSeconds: number;
}

export interface FollowersApi {
  readonly server: Server;
  readonly settings: Record<string, string>;
  sample(): Promise<ApiSample>;
  /** pda_api_rate_limited_total by reason (too_many_connections, held_per_key, …). */
  refusals(): Promise<Record<string, number>>;
}

export async function startFollowersApi(options: {
  readonly dataDir: string;
  readonly nofile: number;
  readonly settings: Record<string, string>;
}): Promise<FollowersApi> {
  const port = await freePort();
  const adminPort = await freePort();
  const server = await startServer(
    'api',
    join(repoRoot, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(options.dataDir, port, { API_ADMIN_PORT: String(adminPort), ...options.settings }),
    answersHealth,
    [],
    ['prlimit', `--nofile=${options.nofile}:${options.nofile}`],
  );
  const metrics = async () => {
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  };
  const value = (lines: readonly string[], name: string) => {
    const line = lines.find((l) => l.startsWith(`${name} `));
    return line === undefined ? null : Number(line.slice(name.length + 1));
  };
  return {
    server,
    settings: options.settings,
    async sample() {
      const lines = await metrics();
      const stats = processStats(server.pid);
      const heap = value(lines, 'pda_api_nodejs_heap_size_used_bytes');
      return {
        rssMb: stats.rssMb,
        heapUsedMb: heap === null ? null : Math.round(heap / 2 ** 20),
        openFds: stats.openFds,
        heldRequests: value(lines, 'pda_api_held_requests'),
        cpuSeconds: stats.cpuSeconds,
      };
    },
    async refusals() {
      const found: Record<string, number> = {};
      for (const line of await metrics()) {
        const match = /^pda_api_rate_limited_total\{[^}]*reason="([^"]+)"[^}]*\} (\S+)$/.exec(line);
        if (match?.[1]) found[match[1]] = (found[match[1]] ?? 0) + Number(match[2]);
      }
      return found;
    },
  };
}
