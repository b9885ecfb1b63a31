import { createServer } from 'node:net';

/**
 * A TCP port nobody listens on right now: bind an ephemeral one, then release it. For tests and
 * benchmarks that start a process (redis-server, the api) which must be told its port up front.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}
