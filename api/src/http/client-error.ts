import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { ApiError } from './api-error.ts';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem.ts';

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (raw non-ASCII bytes in the request
 * line, a broken request line, oversized headers) still get a problem document: 400 bad_request,
 * 431 for oversized headers being folded into it so the answer stays within the contract. There is
 * no request and no rate-limit budget at this point; the connection is closed after the answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const detail =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'The request headers are too large.'
        : 'The request is malformed.';
    const body = JSON.stringify(problemDocument(new ApiError('bad_request', detail), randomUUID()));
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Access-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
