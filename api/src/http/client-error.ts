import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error.ts';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem.ts';

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (raw non-ASCII bytes in the request
 * line, a broken request line, oversized headers) still get a problem document: 400 bad_request,
 * 431 for oversized headers being folded into it so the answer stays within the contract. There is
 * no request: the client address's rate-limit budget is spent and its RateLimit-* headers sent
 * (429 once it is spent), like every answer. The connection is closed after the answer.
 * Fastify calls this with `this` bound to the instance.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (!this.hasDecorator('meterClientAddress')) {
    respond(error, socket, undefined);
    return;
  }
  this.meterClientAddress(socket.remoteAddress ?? 'unknown', (metered) => respond(error, socket, metered));
}

function respond(
  error: NodeJS.ErrnoException,
  socket: Socket,
  metered: { headers: Readonly<Record<string, string>>; exceeded: boolean } | undefined,
): void {
  if (socket.destroyed) return;
  if (socket.writable) {
    const apiError = metered?.exceeded
      ? new ApiError('rate_limit_exceeded', 'The request budget of this client address is spent.')
      : new ApiError(
          'bad_request',
          error.code === 'HPE_HEADER_OVERFLOW'
            ? 'The request headers are too large.'
            : 'The request is malformed.',
        );
    const body = JSON.stringify(problemDocument(apiError, randomUUID()));
    const status = apiError.status === 429 ? '429 Too Many Requests' : '400 Bad Request';
    const extra = Object.entries(metered?.headers ?? {})
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Access-Control-Allow-Origin: *\r\n${extra}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
