/**
 * Fixed-rate latency rows measured with wrk (Debian package `wrk`: C, epoll, one thread) instead of
 * autocannon. Both run on the same two cores as the server. At 1,000 req/s, autocannon's own pacing
 * puts ~7 ms of p99 on a server that only writes bytes from memory (the static peer); wrk adds far
 * less, so its p99 is closer to the server's own (bench/README.md, api).
 *
 * Pacing: wrk's `delay()` hook gives each request the next slot of a fixed cadence (1/rate apart)
 * on the free connections, so the rate holds whatever the service time. Latency is measured from
 * each request's send; far below saturation nothing queues, so the missing coordinated-omission
 * correction (wrk2's) costs little.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoadOptions, Measurement } from '../../shared/api-measure.ts';

const run = promisify(execFile);

// One schedule for the thread (wrk runs with -t1): each request gets the next slot of a fixed
// cadence, 1/rate apart, whichever connection is free (LuaJIT's ffi reads the monotonic clock), so
// the rate holds at \`rate\` whatever the service time. wrk's done() runs in its own Lua state: it
// sees the summary and the latency histogram only.
const SCRIPT = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } pda_timespec;
int clock_gettime(int clk, pda_timespec *tp);
]]
local ts = ffi.new("pda_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval_ms = 1000 / tonumber(os.getenv("WRK_RATE"))
local next_at = nil
function delay()
  local t = now_ms()
  -- After a stall, start the schedule again from now rather than sending a burst.
  if next_at == nil or next_at < t - 100 then next_at = t end
  next_at = next_at + interval_ms
  local wait = next_at - t
  if wait < 0 then return 0 end
  return math.floor(wait)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"bytes":%d,"errors":%d,"status":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    summary.bytes, e.connect + e.read + e.write + e.timeout, e.status))
end
`;

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version.
    return (error as { status?: number }).status === 1;
  }
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  bytes: number;
  errors: number;
  status: number;
}

async function wrk(url: string, headers: Record<string, string>, options: LoadOptions, seconds: number) {
  if (!options.rate) throw new Error('measurePacedWithWrk needs a rate');
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'paced.lua');
  writeFileSync(script, SCRIPT);
  const args = ['-t1', `-c${options.connections}`, `-d${seconds}s`, '--latency', '-s', script];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  const { stdout } = await run('wrk', args, { env: { ...process.env, WRK_RATE: String(options.rate) } });
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
  return JSON.parse(line) as WrkSummary;
}

export async function measurePacedWithWrk(
  name: string,
  url: string,
  headers: Record<string, string>,
  options: LoadOptions,
): Promise<Measurement> {
  if (options.warmupSeconds > 0) await wrk(url, headers, options, options.warmupSeconds);
  const s = await wrk(url, headers, options, options.durationSeconds);
  const ms = (us: number) => Math.round(us / 10) / 100;
  return {
    name,
    url,
    requestsPerSecond: Math.round(s.requests / (s.durationUs / 1e6)),
    p50Ms: ms(s.p50Us),
    p99Ms: ms(s.p99Us),
    maxMs: ms(s.maxUs),
    bytesPerResponse: s.requests > 0 ? Math.round(s.bytes / s.requests) : 0,
    requests: s.requests,
    non2xx: s.status,
    errors: s.errors,
  };
}
