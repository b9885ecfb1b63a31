import type { FastifyReply, FastifyRequest } from 'fastify';
import { CORS_HEADERS } from '../http/cors.ts';
import { markPrivate, NOSNIFF } from '../http/private-headers.ts';
import type { ApiError } from './api-error.ts';
import { PROBLEM_CONTENT_TYPE, problemDocument } from './problem.ts';

/**
 * Headers every response carries (contract: x-response-headers.standard). The private caching
 * headers of problems and keyed answers: sendProblem and plugins/private-responses.ts.
 */
export function setStandardHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', NOSNIFF);
  reply.headers(CORS_HEADERS);
}

/**
 * Answers with the problem document of `error`; the single way an error reaches a client. Private
 * here as well as on send: a malformed URL's answer (framework-error.ts) runs no onSend hook.
 */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  setStandardHeaders(request, reply);
  markPrivate(reply);
  if (error.headers) reply.headers(error.headers);
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemDocument(error, String(request.id)));
}
