import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A node:http reverse proxy in front of the api whose first answers are failures, then every
 * request is passed through: real HTTP between the client and a misbehaving server, no mocked
 * fetch. A failure is an answer with a status (a problem document, or an HTML page as a load
 * balancer would send), or a connection cut before any answer.
 */
export type Failure =
  | { readonly status: number; readonly retryAfter?: string; readonly html?: boolean }
  | 'cut-connection';

export interface FlakyProxy {
  readonly url: string;
  /** Every request received, in order (path and query). */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startFlakyProxy(
  target: () => string,
  failures: Failure[],
  options: { repeatLast?: boolean } = {},
): Promise<FlakyProxy> {
  const pending = [...failures];
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const failure = options.repeatLast && pending.length === 1 ? pending[0] : pending.shift();
    if (failure === 'cut-connection') req.socket.destroy();
    else if (failure !== undefined) fail(res, failure);
    else pass(req, res, target());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function fail(res: ServerResponse, failure: Exclude<Failure, 'cut-connection'>): void {
  const headers: Record<string, string> = failure.retryAfter ? { 'retry-after': failure.retryAfter } : {};
  if (failure.html) {
    res.writeHead(failure.status, { ...headers, 'content-type': 'text/html' });
    res.end('<html><body>Bad gateway</body></html>');
    return;
  }
  const code = failure.status === 503 ? 'service_unavailable' : 'internal_error';
  res.writeHead(failure.status, { ...headers, 'content-type': 'application/problem+json' });
  res.end(
    JSON.stringify({
      type: `https://developer.example.com/public-data-api/errors/${code}`,
      title: 'Failure injected by the test proxy',
      status: failure.status,
      code,
      request_id: 'proxy-injected',
    }),
  );
}

function pass(req: IncomingMessage, res: ServerResponse, target: string): void {
  const upstream = httpRequest(
    `${target}${req.url ?? '/'}`,
    { method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}
