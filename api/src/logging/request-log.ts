import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { redactText } from './log-redaction.ts';

/**
 * One log line per request, at info, once the answer is sent: method, URL, client address, status
 * and response time, with the request id like every line. Fastify's default is two lines per
 * request ("incoming request" + "request completed"), and at log level info the second line is CPU
 * spent on every request (bench/README.md, "Where a list request's CPU goes", measured by
 * bench/api/profile.ts).
 * 204 (preflights) and 304 (polls that found nothing) log at debug: the cheap answers a client can
 * ask for fastest, whose lines would otherwise outnumber the rest (a log line costs more than
 * such an answer); their counts are in pda_api_requests_total.
 * Headers are never logged (the key is in one), and the URL is logged redacted (log-redaction.ts).
 * Fastify's lines that would put the raw URL or an error message in `msg`, where no serializer
 * reaches, are rewritten; every other Fastify log line is unchanged.
 */
const QUIET_STATUSES: ReadonlySet<number> = new Set([204, 304]);

export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {
    // Folded into requestCompleted.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
    } else {
      const level = QUIET_STATUSES.has(reply.statusCode) ? 'debug' : 'info';
      reply.log[level]({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.info({ req: request }, 'route not found');
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    reply.log[level]({ req: request, res: reply, err: error }, redactText(error?.message ?? ''));
  }
}
