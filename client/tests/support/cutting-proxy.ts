import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A node:http reverse proxy in front of the api that cuts its n-th answer after `cuts[n]` bytes of
 * body (a connection lost mid-stream: the client sees the body end without its last chunk), and
 * passes every answer whole once its cuts are used. It asks the api for identity coding, so that
 * the bytes counted and kept (`bodies`: what each answer passed on) are the stream's own lines.
 */
export interface CuttingProxy {
  readonly url: string;
  /** Per request, in order: the body bytes passed on before the end or the cut. */
  readonly bodies: string[];
  close(): Promise<void>;
}

export async function startCuttingProxy(target: () => string, cuts: number[]): Promise<CuttingProxy> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const index = bodies.push('') - 1;
    const cutAt = cuts[index];
    const headers = { ...req.headers, 'accept-encoding': 'identity' };
    const upstream = httpRequest(`${target()}${req.url ?? '/'}`, { headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      let passed = 0;
      let cut = false;
      answer.on('data', (data: Buffer) => {
        if (cut) return;
        const part = cutAt === undefined ? data : data.subarray(0, Math.max(0, cutAt - passed));
        passed += part.length;
        bodies[index] += part.toString('utf8');
        if (part.length > 0) res.write(part);
        if (cutAt !== undefined && passed >= cutAt) {
          cut = true;
          answer.destroy();
          // Written, then the connection torn down: the client gets these bytes, then an error.
          res.write('', () => res.destroy());
        }
      });
      answer.on('end', () => res.end());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
