import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autoload from '@fastify/autoload';
import type { Tracing } from '@pda/tracing';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { AppOptions } from './app-options.ts';
import type { CompressionSettings } from './compression/encoders.ts';
import type { Config } from './config.ts';
import { answerClientError } from './connections/client-error.ts';
import { collectRoutes, inventoryMismatch, type RouteEntry } from './contract/route-inventory.ts';
import { answerMalformedUrl } from './errors/framework-error.ts';
import type {} from './fastify-augmentations.ts';
import { hopRequestId, secretMatcher } from './forward/hop.ts';
import { parseQueryString } from './http/query-string.ts';
import { redactingLogger } from './logging/log-redaction.ts';
import { OneLinePerRequest } from './logging/request-log.ts';
import { registerTracing } from './observability/tracing.ts';

/**
 * Builds the api (no listening: server.ts does that). Shared services are named plugins under
 * plugins/ (config, contract, projections, problems, auth, ...) and routes are one file per
 * resource under routes/, both loaded by @fastify/autoload; a new plugin (rate limiting,
 * under-pressure) is a new file in plugins/ declaring its dependencies.
 */

export interface AppDeps {
  readonly now?: () => number;
  /** Fastify logger option: pino options, an existing logger instance, or false. */
  readonly logger?: FastifyServerOptions['logger'];
  readonly loggerInstance?: FastifyServerOptions['loggerInstance'];
  readonly contractFile?: string;
  /** Compression settings instead of the production ones (plugins/compress.ts): benchmarks only. */
  readonly compression?: CompressionSettings;
  /**
   * More plugins, registered on the root after plugins/ and before the routes (benchmarks compare
   * the compression plugin the api had before with this one: bench/api/compression.ts).
   */
  readonly plugins?: readonly FastifyPluginAsync[];
  /** Request spans (observability/tracing.ts) when traces are on; main.ts starts it from OTEL_*. */
  readonly tracing?: Tracing;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route added (HEAD excluded), in OpenAPI path form. */
    routeInventory: readonly RouteEntry[];
  }
}

export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  // A trusted hop from another api node keeps the request id the partner was given (plugins/forward.ts).
  const hopMatches = config.forwarding ? secretMatcher(config.forwarding.acceptedSecrets) : undefined;
  const app = Fastify({
    // No key in any log line, not even one sent in the URL (logging/log-redaction.ts).
    ...redactingLogger(config.logLevel, deps.logger, deps.loggerInstance),
    genReqId: (request) => hopRequestId(request, hopMatches) ?? randomUUID(),
    // One line per request instead of Fastify's two (logging/request-log.ts).
    logController: new OneLinePerRequest(),
    // A list is copied: Fastify's type wants a mutable array (it only reads it).
    trustProxy: typeof config.trustProxy === 'boolean' ? config.trustProxy : [...config.trustProxy],
    // No request needs a body: keep whatever a client sends small.
    bodyLimit: 1024,
    routerOptions: { querystringParser: parseQueryString, maxParamLength: 200 },
    ajv: {
      // Unknown query parameters must be reported, not silently stripped (Fastify's default).
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    clientErrorHandler: answerClientError,
    // Requests that arrive while the api drains its connections are answered, with
    // `Connection: close`, not refused with Fastify's 503 (plugins/drain.ts).
    return503OnClosing: false,
    // A path that is not valid percent-encoding never reaches a route: answer it like any 400.
    frameworkErrors: (error, request, reply) => {
      request.log.info({ req: request, code: error.code }, 'malformed request URL');
      void answerMalformedUrl(app, request, reply);
    },
  });

  // First, so that its hooks wrap every route added after it.
  if (deps.tracing) await registerTracing(app, deps.tracing);
  const routes = collectRoutes(app);
  app.decorate('routeInventory', routes);
  app.addHook('onReady', async () => {
    const mismatch = inventoryMismatch(routes, app.contract);
    if (mismatch.length > 0) throw new Error(`routes do not match the contract: ${mismatch.join('; ')}`);
  });

  const options: AppOptions = {
    config,
    now: deps.now ?? Date.now,
    contractFile: deps.contractFile,
    compression: deps.compression,
  };
  await app.register(autoload, {
    dir: fileURLToPath(new URL('./plugins', import.meta.url)),
    options,
    ignorePattern: /\.test\.ts$/,
  });
  for (const plugin of deps.plugins ?? []) await app.register(fp(plugin));
  await app.register(autoload, {
    dir: fileURLToPath(new URL('./routes', import.meta.url)),
    options,
    dirNameRoutePrefix: false,
    ignorePattern: /\.test\.ts$/,
  });
  return app;
}
