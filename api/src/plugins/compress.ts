import compress from '@fastify/compress';
import fp from 'fastify-plugin';

/**
 * Response compression for partners on real networks (api/README.md, "Compression"): a response
 * of at least API_COMPRESS_MIN_BYTES (default 1 KiB: a 50-row page is ~32 KB, an item ~1 KB) is
 * sent gzip- or brotli-encoded when the request's Accept-Encoding allows it, with
 * `Vary: Accept-Encoding`. Requests without Accept-Encoding get the bytes unchanged and pay
 * nothing. Brotli runs at quality 4 (@fastify/compress's default): bench/README.md measured it
 * against gzip. API_COMPRESS_MIN_BYTES=0 turns compression off.
 */
export default fp(
  async (app) => {
    const threshold = app.config.compressMinBytes;
    if (threshold === 0) return;
    await app.register(compress, {
      global: true,
      threshold,
      encodings: ['br', 'gzip'],
      // Problems and JSON documents only: the api serves nothing else.
      customTypes: /^application\/(?:problem\+)?json/,
    });
  },
  { name: 'pda-compress', fastify: '5.x', dependencies: ['pda-config'] },
);
