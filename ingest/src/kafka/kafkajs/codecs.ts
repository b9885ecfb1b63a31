/**
 * Record-batch codecs kafkajs lacks. kafkajs 2.2.4 decodes gzip itself and throws "not implemented"
 * for the others, which a connector may choose (`producer.override.compression.type`). zstd comes
 * from Node's own zlib (Node ≥ 22.15): no native package to build, and it runs on libuv's thread
 * pool like kafkajs' gzip, off the main thread.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import kafkajs from 'kafkajs';

// kafkajs is CommonJS: Node's ESM loader does not see these exports as named ones.
const { CompressionCodecs, CompressionTypes } = kafkajs;

const zstdCompress = promisify(zlib.zstdCompress);
const zstdDecompress = promisify(zlib.zstdDecompress);

const zstdCodec = () => ({
  compress: (encoder: { buffer: Buffer }) => zstdCompress(encoder.buffer),
  decompress: (buffer: Buffer) => zstdDecompress(buffer),
});

/** Idempotent: kafkajs keeps one codec table per process. */
export function registerCodecs(): void {
  CompressionCodecs[CompressionTypes.ZSTD] = zstdCodec;
}
