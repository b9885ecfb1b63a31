/**
 * The api as api/src/main.ts starts it, with the compression of one bench/api/compression.ts
 * variant (BENCH_COMPRESSION, JSON of a Variant), then prints "ready":
 * - `shipped`: as configured (api/src/plugins/compress.ts);
 * - `settings`: that plugin with other settings (codings, levels, engine reuse);
 * - `fastify-compress`: that plugin off and @fastify/compress instead, the api's plugin before
 *   (its stream pipeline above a size, zlib's *Sync functions below it);
 * - `thread-pool`: that plugin off and a bare onSend hook handing gzip to zlib's thread pool.
 */
import { gzip } from 'node:zlib';
import compress, { type FastifyCompressOptions } from '@fastify/compress';
import { type AppDeps, buildApp, type CompressionSettings, parseConfig, startServer } from '@pda/api';

export type Variant =
  | { readonly kind: 'shipped' }
  | { readonly kind: 'settings'; readonly settings: CompressionSettings }
  | {
      readonly kind: 'fastify-compress';
      readonly options: Omit<FastifyCompressOptions, 'customTypes' | 'zlib'>;
    }
  | { readonly kind: 'thread-pool'; readonly level: number };

const variant = JSON.parse(process.env.BENCH_COMPRESSION ?? '{"kind":"shipped"}') as Variant;
const ownOff = variant.kind === 'fastify-compress' || variant.kind === 'thread-pool';
const config = parseConfig({ ...process.env, ...(ownOff ? { API_COMPRESS_MIN_BYTES: '0' } : {}) });
const deps: AppDeps =
  variant.kind === 'settings'
    ? { compression: variant.settings }
    : variant.kind === 'fastify-compress'
      ? {
          plugins: [
            async (app) => {
              // As the api registered it before (threshold: API_COMPRESS_MIN_BYTES's default).
              await app.register(compress, {
                ...variant.options,
                threshold: 1024,
                customTypes: /^application\/(?:problem\+)?json/,
              });
            },
          ],
        }
      : {};
const app = await buildApp(config, deps);
if (variant.kind === 'thread-pool') {
  const { level } = variant;
  // The least a hook does for the list page: gzip only, a JSON string over 1 KiB.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (
      typeof payload !== 'string' ||
      payload.length < 1024 ||
      !(request.headers['accept-encoding'] ?? '').includes('gzip')
    ) {
      done(null, payload);
      return;
    }
    reply.header('vary', 'Accept-Encoding').header('content-encoding', 'gzip');
    gzip(payload, { level }, (error, body) => (error ? done(error) : done(null, body)));
  });
}
await startServer(app, config);
process.stdout.write('ready\n');
