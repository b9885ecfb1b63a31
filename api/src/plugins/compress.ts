import type { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';
import { negotiateEncoding } from '../compression/accept-encoding.ts';
import { type Coding, type CompressionSettings, encoders } from '../compression/encoders.ts';
import { streamEncoder } from '../compression/stream-encoders.ts';
import { addVary } from '../http/private-headers.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The compressor of a streamed answer in the coding the request prefers (the change feed as a
     * stream: changes/stream-response.ts), flushed at each write; undefined: the bytes as they are
     * (not accepted, or API_COMPRESS_MIN_BYTES=0). The caller sets Content-Encoding and Vary.
     */
    streamEncoder(request: FastifyRequest): { coding: Coding; encoder: Transform } | undefined;
  }
}

/**
 * Response compression (api/README.md, "Compression"): a JSON or problem response of at least
 * API_COMPRESS_MIN_BYTES is sent in the coding the request's Accept-Encoding prefers
 * (compression/accept-encoding.ts), compressed in one call (compression/encoders.ts), with
 * `Vary: Accept-Encoding` and the compressed Content-Length (HEAD too: Fastify's HEAD route measures
 * the same bytes). API_COMPRESS_MIN_BYTES=0 turns compression off.
 *
 * Every common client sends `Accept-Encoding: gzip, deflate, br`, so this is the path most pages
 * take; the settings are what bench/api/compression.ts measured cheapest per page (api/README.md
 * has the table): fast levels, whose bytes stay within a quarter of zlib's default level; among
 * codings accepted with the same q-value, zstd when asked for (the cheapest and smallest), then
 * brotli's fastest quality through a reused engine (cheaper than gzip's fastest level), then gzip.
 */
export const COMPRESSION: CompressionSettings = {
  offered: ['zstd', 'br', 'gzip', 'deflate'],
  zlibLevel: 1,
  brotliQuality: 0,
  zstdLevel: 1,
  reuseEngines: true,
};

// Problems and JSON documents only: the api serves nothing else.
const COMPRESSIBLE = /^application\/(?:problem\+)?json\b/i;

export default fp(
  async (app, options: AppOptions) => {
    const threshold = app.config.compressMinBytes;
    const settings = options.compression ?? COMPRESSION;
    // Clients repeat the same few headers: each is parsed once (a bounded memo).
    const chosen = new Map<string, Coding | undefined>();
    const negotiate = (header: string | undefined): Coding | undefined => {
      if (header === undefined) return undefined;
      if (chosen.has(header)) return chosen.get(header);
      const coding = negotiateEncoding(header, settings.offered);
      if (chosen.size >= 100) chosen.clear();
      chosen.set(header, coding);
      return coding;
    };
    app.decorate('streamEncoder', (request: FastifyRequest) => {
      const coding = threshold === 0 ? undefined : negotiate(request.headers['accept-encoding']);
      return coding === undefined ? undefined : { coding, encoder: streamEncoder(coding, settings) };
    });
    if (threshold === 0) return;
    const encode = encoders(settings);
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!eligible(reply, payload, threshold)) {
        done(null, payload);
        return;
      }
      // Whether or not this request gets it encoded, another request for it might.
      addVary(reply, ['Accept-Encoding']);
      const coding = negotiate(request.headers['accept-encoding']);
      if (coding === undefined) {
        done(null, payload);
        return;
      }
      let body: Buffer;
      try {
        body = encode[coding](payload);
      } catch (error) {
        // The plain bytes are as good an answer: a failed compression never becomes an error.
        request.log.warn({ err: error, coding }, 'compression failed, sent uncompressed');
        done(null, payload);
        return;
      }
      reply.header('content-encoding', coding);
      // Fastify sets the length of the bytes it is handed.
      reply.removeHeader('content-length');
      done(null, body);
    });
  },
  { name: 'pda-compress', fastify: '5.x', dependencies: ['pda-config'] },
);

function eligible(reply: FastifyReply, payload: unknown, threshold: number): payload is string | Buffer {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return false;
  const status = reply.statusCode;
  if (status === 204 || status === 304 || status < 200) return false;
  if (reply.hasHeader('content-encoding')) return false;
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return false;
  // A string's length in UTF-16 units never exceeds its length in UTF-8 bytes.
  return (
    payload.length >= threshold || (typeof payload === 'string' && Buffer.byteLength(payload) >= threshold)
  );
}
