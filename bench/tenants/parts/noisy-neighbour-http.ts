/**
 * The HTTP client of bench/tenants/noisy-neighbour.ts: node:http on kept-alive connections from a chosen
 * loopback source address. The hostile key and the victim call from different addresses
 * (127.0.0.2 and 127.0.0.1), as two tenants do, so the api's per-address connection cap
 * (API_MAX_CONNECTIONS_PER_ADDRESS) and the per-address budget of preflights are each one's own.
 */
import { Agent, type IncomingHttpHeaders, request } from 'node:http';

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** From the request's start to the last byte of the body. */
  readonly ms: number;
  /** Bytes of the body (kept in `body` unless the request discarded it). */
  readonly bytes: number;
}

export interface Client {
  get(url: string, headers?: Record<string, string>): Promise<Answer>;
  /** `discard`: the body is counted, not kept (a whole stream of a big company). */
  send(method: string, url: string, headers?: Record<string, string>, discard?: boolean): Promise<Answer>;
  close(): void;
}

/** A client whose connections leave from `localAddress`; each request times out after `timeoutMs`. */
export function httpClient(localAddress: string, maxSockets: number, timeoutMs: number): Client {
  const agent = new Agent({ keepAlive: true, maxSockets, localAddress });
  const send = (method: string, url: string, headers: Record<string, string> = {}, discard = false) =>
    new Promise<Answer>((resolve, reject) => {
      const at = performance.now();
      const outgoing = request(url, { method, headers, agent, timeout: timeoutMs }, (incoming) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        incoming.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (!discard) chunks.push(chunk);
        });
        incoming.on('error', reject);
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - at,
            bytes,
          }),
        );
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`timed out after ${timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end();
    });
  return {
    get: (url, headers) => send('GET', url, headers),
    send,
    close: () => agent.destroy(),
  };
}

/** The problem `code` of an error answer, or its status when the body is not a problem document. */
export function answerCode(answer: Answer): string {
  if (answer.status < 400) return String(answer.status);
  try {
    const code = (JSON.parse(answer.body) as { code?: unknown }).code;
    return typeof code === 'string' ? `${answer.status} ${code}` : String(answer.status);
  } catch {
    return String(answer.status);
  }
}

/** `links.next` of a page (null on a last page); throws on an answer that is no page. */
export function nextLink(answer: Answer): string | null {
  const body = JSON.parse(answer.body) as { links?: { next?: string | null } };
  if (body.links === undefined)
    throw new Error(`not a page (${answer.status}): ${answer.body.slice(0, 200)}`);
  return body.links.next ?? null;
}
