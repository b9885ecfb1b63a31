import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.ts';
import { PROBLEM_CONTENT_TYPE, type ProblemDocument, problemDocument } from '../errors/problem.ts';
import { setStandardHeaders } from '../errors/send-problem.ts';
import { markPrivate } from '../http/private-headers.ts';

/**
 * The 503 of an overloaded process (plugins/under-pressure.ts): status, headers and the problem
 * document, returned for the plugin to send (the error handler is bypassed, see the plugin).
 */
export function overloadAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  retryAfterSeconds: number,
): ProblemDocument {
  const error = new ApiError(
    'service_unavailable',
    `The service is overloaded; retry in ${retryAfterSeconds} s.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
  setStandardHeaders(request, reply);
  markPrivate(reply);
  reply.headers(error.headers ?? {});
  reply.code(error.status).type(PROBLEM_CONTENT_TYPE);
  return problemDocument(error, String(request.id));
}

const LOG_EVERY_MS = 1_000;

/** At most one log line per second while shedding, with what tripped and how many were shed. */
export function sheddingLog(log: FastifyBaseLogger, now: () => number = Date.now) {
  let shed = 0;
  let lastLogMs = Number.NEGATIVE_INFINITY;
  return {
    shed(type: string, value: number | undefined): void {
      shed += 1;
      const nowMs = now();
      if (nowMs - lastLogMs < LOG_EVERY_MS) return;
      log.warn({ type, value, shed }, 'overloaded: answering 503 service_unavailable');
      lastLogMs = nowMs;
      shed = 0;
    },
  };
}
