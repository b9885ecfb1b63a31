import { redactUrl } from '@pda/projections/model';
import type { FastifyBaseLogger, FastifyRequest, FastifyServerOptions } from 'fastify';
import { stdSerializers } from 'pino';
import { hashOpaqueValues } from '../http/opaque-values.ts';

/**
 * No API key reaches a log line, even one a client sent the wrong way (`/v1/sites?api_key=…`,
 * answered 401): every `req` Fastify or this api logs is serialised with its URL passed through
 * redactUrl (projections/src/model/redact-url.ts), and an error's message and stack (Fastify puts the
 * offending URL component in some of its own) get the same treatment word by word. Headers are
 * never serialised; `Authorization` is redacted by path on top of that. Cursors and sync tokens in
 * a logged URL become a short digest (../http/opaque-values.ts).
 */

/** Fastify's own `req` serializer (lib/logger-pino.js) minus the header it reads, URL redacted. */
function req(request: FastifyRequest) {
  const remotePort = request.socket?.remotePort;
  return {
    method: request.method,
    url: hashOpaqueValues(redactUrl(String(request.url ?? ''))),
    host: request.host,
    remoteAddress: request.ip,
    ...(remotePort === undefined ? {} : { remotePort }),
  };
}

function err(error: Error) {
  const serialized = stdSerializers.err(error);
  serialized.message = redactText(serialized.message);
  if (serialized.stack) serialized.stack = redactText(serialized.stack);
  return serialized;
}

/** Text that may quote a URL (an error message): each whitespace-separated word is redacted as one. */
export function redactText(text: string): string {
  return text
    .split(/(\s+)/)
    .map((word) => hashOpaqueValues(redactUrl(word)))
    .join('');
}

export const LOG_SERIALIZERS = { req, err } as const;

const REDACT_PATHS = ['req.headers.authorization', 'headers.authorization'];

/** Fastify's logger options with the redacting serializers, whichever way the logger is given. */
export function redactingLogger(
  level: string,
  logger: FastifyServerOptions['logger'] | undefined,
  instance: FastifyBaseLogger | undefined,
): Pick<FastifyServerOptions, 'logger' | 'loggerInstance'> {
  if (instance) return { loggerInstance: instance.child({}, { serializers: LOG_SERIALIZERS }) };
  if (logger === false) return { logger: false };
  const options = logger === undefined || logger === true ? { level, redact: REDACT_PATHS } : logger;
  return { logger: { ...options, serializers: { ...options.serializers, ...LOG_SERIALIZERS } } };
}
