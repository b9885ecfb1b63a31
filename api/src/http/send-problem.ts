import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from './api-error.ts';
import { CORS_HEADERS } from './cors.ts';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem.ts';

/** Headers every response carries (contract: x-response-headers.standard). */
export function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.headers(CORS_HEADERS);
}

/** Answers with the problem document of `error`; the single way an error reaches a client. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  setStandardHeaders(request, reply);
  if (error.headers) reply.headers(error.headers);
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemDocument(error, String(request.id)));
}
