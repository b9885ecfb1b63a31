import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError, rateLimitExceeded } from '../errors/api-error.ts';
import { PROBLEM_CONTENT_TYPE, problemDocument } from '../errors/problem.ts';
import { CORS_HEADERS } from '../http/cors.ts';
import { PRIVATE_HEADERS } from '../http/private-headers.ts';
import type { AddressMetering } from '../rate-limit/address-meter.ts';

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
  // API_HEADERS_TIMEOUT_MS / API_REQUEST_TIMEOUT_MS passed (connections/connection-limits.ts): an idle or
  // slow connection, closed without an answer (there may be no request to answer, or one being
  // answered), and counted.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    if (this.hasDecorator('metrics')) this.metrics.recordRefusal('request_timeout');
    return;
  }
  if (!this.hasDecorator('meterClientAddress')) {
    respond(error, socket, undefined);
    return;
  }
  this.meterClientAddress(socket.remoteAddress ?? 'unknown', (metered) => {
    // No request, so no onResponse hook: the refusal is counted here (plugins/metrics.ts).
    if (metered.exceeded && this.hasDecorator('metrics')) this.metrics.recordRefusal('rate_limit_exceeded');
    respond(error, socket, metered);
  });
}

function respond(error: NodeJS.ErrnoException, socket: Socket, metered: AddressMetering | undefined): void {
  if (socket.destroyed) return;
  if (socket.writable) {
    const apiError = metered?.exceeded
      ? rateLimitExceeded(metered.ttlMs)
      : new ApiError(
          'bad_request',
          error.code === 'HPE_HEADER_OVERFLOW'
            ? 'The request headers are too large.'
            : 'The request is malformed.',
        );
    const body = JSON.stringify(problemDocument(apiError, randomUUID()));
    const status = `${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}`;
    const extra = Object.entries({
      ...CORS_HEADERS,
      ...PRIVATE_HEADERS,
      ...metered?.headers,
      ...apiError.headers,
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${extra}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
