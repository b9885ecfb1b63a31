import type { Transform } from 'node:stream';
import { constants, createBrotliCompress, createDeflate, createGzip, createZstdCompress } from 'node:zlib';
import type { Coding, CompressionSettings } from './encoders.ts';

/**
 * Compressors of a streamed answer (the change feed as a stream: changes/stream-response.ts), with
 * the same codings and levels as whole bodies (encoders.ts). Each write is flushed: a chunk of the
 * stream ends with its position line, and a partner must be able to decode everything up to it as
 * soon as it arrives (a live stream's change or heartbeat would otherwise wait in the compressor's
 * window). A flush per chunk of up to 200 items costs a few bytes, not the ratio.
 */
export function streamEncoder(coding: Coding, settings: CompressionSettings): Transform {
  switch (coding) {
    case 'gzip':
      return createGzip({ level: settings.zlibLevel, flush: constants.Z_SYNC_FLUSH });
    case 'deflate':
      return createDeflate({ level: settings.zlibLevel, flush: constants.Z_SYNC_FLUSH });
    case 'br':
      return createBrotliCompress({
        flush: constants.BROTLI_OPERATION_FLUSH,
        params: { [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality },
      });
    case 'zstd':
      return createZstdCompress({
        flush: constants.ZSTD_e_flush,
        params: { [constants.ZSTD_c_compressionLevel]: settings.zstdLevel },
      });
  }
}
