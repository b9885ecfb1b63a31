import { zstdCompressSync } from 'node:zlib';
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { registerCodecs } from '../src/kafka/kafkajs/codecs.ts';

const { CompressionCodecs, CompressionTypes } = kafkajs;

describe('kafkajs codecs', () => {
  it('decodes a zstd record batch body once registered (kafkajs alone throws "not implemented")', async () => {
    const body = Buffer.from('{"op":"c","after":{"id":"s-1"}}'.repeat(50));
    expect(() => CompressionCodecs[CompressionTypes.ZSTD]?.()).toThrow(/not implemented/);
    registerCodecs();
    const codec = CompressionCodecs[CompressionTypes.ZSTD]?.() as unknown as {
      compress(encoder: { buffer: Buffer }): Promise<Buffer>;
      decompress(buffer: Buffer): Promise<Buffer>;
    };
    // A frame written by another zstd encoder (the Java producer's zstd-jni writes standard frames).
    expect(await codec.decompress(zstdCompressSync(body))).toEqual(body);
    const compressed = await codec.compress({ buffer: body });
    expect(compressed.length).toBeLessThan(body.length / 10);
    expect(await codec.decompress(compressed)).toEqual(body);
  });

  it('leaves gzip to kafkajs', () => {
    registerCodecs();
    expect(CompressionCodecs[CompressionTypes.GZIP]).toBeDefined();
    expect(() => CompressionCodecs[CompressionTypes.GZIP]?.()).not.toThrow();
  });
});
