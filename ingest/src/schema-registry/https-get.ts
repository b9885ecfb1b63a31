/**
 * A `fetch` for GET requests that trusts the given CA certificates for this one client: Node's
 * global fetch takes no `ca`, and NODE_EXTRA_CA_CERTS would make the private CA trusted by every
 * connection of the process. The certificate chain and the host name are checked as usual.
 */
import { request } from 'node:https';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export function fetchTrusting(ca: string): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.protocol !== 'https:') {
        reject(new TypeError(`only https is fetched with a CA file, not ${url.protocol}`));
        return;
      }
      const req = request(
        url,
        {
          method: 'GET',
          headers: Object.fromEntries(new Headers(init?.headers).entries()),
          ca,
          ...(init?.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY_BYTES) res.destroy(new Error(`answer larger than ${MAX_BODY_BYTES} bytes`));
            else chunks.push(chunk);
          });
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 500;
            const empty = status === 204 || status === 205 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status }));
          });
        },
      );
      req.on('error', (error) => {
        // The same shape as fetch's failures, which client.ts reads (`cause.code`, TimeoutError).
        if (init?.signal?.aborted) reject(init.signal.reason);
        else reject(Object.assign(new TypeError('fetch failed'), { cause: error }));
      });
      req.end();
    });
}
