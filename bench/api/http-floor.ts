/**
 * The HTTP floor under the api benchmark (NOT a test): the same bytes (default 32,000, about a
 * 50-row page) served from memory by a bare node:http server and by a bare Fastify route (the
 * api's framework and version, no plugins), both in one child process, measured alternately with
 * autocannon from this one. It separates what the framework costs from what the api's per-request
 * work costs.
 *
 *   pnpm --filter @pda/bench exec node api/http-floor.ts [--bytes 32000] [--rounds 2] [--duration 10]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { measure } from '../shared/api-measure.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    bytes: { type: 'string', default: '32000' },
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    serve: { type: 'boolean', default: false },
  },
});
const body = Buffer.alloc(Number(args.bytes), 'a');
const load = { connections: 10, durationSeconds: Number(args.duration), warmupSeconds: 3 };

/** The child: both servers, then their ports to the parent. */
async function serve(): Promise<void> {
  const bare = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', () => resolve()));
  const app = Fastify({ logger: false });
  app.get('/', (_request, reply) => {
    reply.header('content-type', 'application/json').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send?.({
    bare: (bare.address() as AddressInfo).port,
    fastify: (app.server.address() as AddressInfo).port,
  });
}

if (args.serve) {
  await serve();
} else {
  await measureBoth();
}

async function measureBoth(): Promise<void> {
  const child = fork(import.meta.filename, ['--serve', '--bytes', String(body.length)]);
  const [ports] = (await once(child, 'message')) as [{ bare: number; fastify: number }];
  const bareUrl = `http://127.0.0.1:${ports.bare}/`;
  const fastifyUrl = `http://127.0.0.1:${ports.fastify}/`;

  const rows: string[] = [];
  const loadStart = loadavg()[0] ?? 0;
  for (let round = 1; round <= Number(args.rounds); round++) {
    const node = await measure('bare node:http', bareUrl, {}, load);
    const fastify = await measure('bare Fastify route', fastifyUrl, {}, load);
    rows.push(
      `| ${round} | ${node.requestsPerSecond.toLocaleString('en-US')} | ${fastify.requestsPerSecond.toLocaleString('en-US')} | ${Math.round((fastify.requestsPerSecond / node.requestsPerSecond) * 100)} % |`,
    );
  }
  child.kill();
  process.stdout.write(
    `${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, load average ${loadStart.toFixed(2)}; ${body.length} bytes per response, autocannon 10 connections, ${load.durationSeconds} s per row after 3 s warm-up, both servers in one child process\n\n| round | bare node:http req/s | bare Fastify req/s | Fastify ÷ node |\n|---:|---:|---:|---:|\n${rows.join('\n')}\n`,
  );
}
