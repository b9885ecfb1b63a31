import {
  brotliCompressSync,
  constants,
  createDeflate,
  createGzip,
  type Deflate,
  deflateSync,
  type Gzip,
  gzipSync,
  zstdCompressSync,
} from 'node:zlib';

/**
 * One-shot encoders of whole response bodies for plugins/compress.ts. The api's bodies are complete
 * strings, so each is compressed in one call on the event loop: zlib's stream pipeline and its
 * thread pool cost more than the compression itself at these sizes (bench/api-compression.ts).
 */

export type Coding = 'gzip' | 'deflate' | 'br' | 'zstd';

export interface CompressionSettings {
  /** Codings offered, in the order taken among those a request accepts with the same q-value. */
  readonly offered: readonly Coding[];
  /** zlib level of gzip and deflate (0-9). */
  readonly zlibLevel: number;
  /** Brotli quality (0-11). */
  readonly brotliQuality: number;
  /** zstd level (negative levels are faster still). */
  readonly zstdLevel: number;
  /**
   * gzip and deflate through one zlib engine per coding, reset after each body, instead of a new
   * engine per body (zlib's *Sync): see reusableZlib.
   */
  readonly reuseZlib: boolean;
}

/** Encodes a whole body: a string is taken as UTF-8. */
export type Encoder = (body: string | Buffer) => Buffer;

export function encoders(settings: CompressionSettings): Record<Coding, Encoder> {
  const level = settings.zlibLevel;
  const gzip: Encoder = (body) => gzipSync(body, { level });
  const deflate: Encoder = (body) => deflateSync(body, { level });
  const brotli = { params: { [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality } };
  const zstd = { params: { [constants.ZSTD_c_compressionLevel]: settings.zstdLevel } };
  return {
    gzip: (settings.reuseZlib && reusableZlib(createGzip({ level }), gzip)) || gzip,
    deflate: (settings.reuseZlib && reusableZlib(createDeflate({ level }), deflate)) || deflate,
    br: (body) => brotliCompressSync(body, brotli),
    zstd: (body) => zstdCompressSync(body, zstd),
  };
}

/** What reusableZlib uses of a zlib stream: the native handle Node's own *Sync functions drive. */
interface ZlibInternals {
  readonly _handle?: {
    writeSync(
      flush: number,
      input: Uint8Array,
      inputOffset: number,
      inputLength: number,
      output: Uint8Array,
      outputOffset: number,
      outputLength: number,
    ): void;
    reset(): void;
  };
  /** [output bytes left, input bytes left] after a write. */
  readonly _writeState?: Uint32Array;
}

/** Bodies above this go through the fallback, so the kept buffers stay small. */
const REUSE_MAX_BYTES = 1 << 20;

/**
 * An encoder that keeps one zlib engine, one input and one output buffer for every body. zlib's
 * *Sync functions build a new stream object and native engine (~300 KB) per call, and a string
 * becomes a new Buffer first: per response, that garbage costs the api more CPU than the
 * compression (V8's collector runs far more often; bench/api-compression.ts measures both). This
 * drives the engine's native handle the way those functions do, one Z_FINISH write and a reset.
 * The handle is internal to node:zlib: when it is not there as expected this returns undefined
 * and the caller uses `fallback`, as it does after a failed write (tests/encoders.test.ts decodes
 * every coding, so a change in Node shows there).
 */
function reusableZlib(engine: Gzip | Deflate, fallback: Encoder): Encoder | undefined {
  const { _handle: handle, _writeState: state } = engine as unknown as ZlibInternals;
  if (typeof handle?.writeSync !== 'function' || typeof handle.reset !== 'function') return undefined;
  if (!(state instanceof Uint32Array) || state.length < 2) return undefined;
  // A failed write destroys the engine (node:zlib cannot recover one): from then on, the fallback.
  engine.on('error', () => {});
  let input = Buffer.allocUnsafe(64 * 1024);
  let output = Buffer.allocUnsafe(64 * 1024);
  return (body) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = typeof body === 'string' ? 3 * body.length : body.length;
    // Stored blocks bound deflate's output: 5 bytes per 16 KiB block plus header and trailer.
    const bound = most + 5 * Math.ceil(most / 16_384) + 64;
    if (engine.destroyed || bound > REUSE_MAX_BYTES) return fallback(body);
    let bytes: Buffer;
    if (typeof body === 'string') {
      if (input.length < most) input = Buffer.allocUnsafe(most);
      bytes = input.subarray(0, input.write(body));
    } else {
      bytes = body;
    }
    if (output.length < bound) output = Buffer.allocUnsafe(bound);
    handle.writeSync(constants.Z_FINISH, bytes, 0, bytes.length, output, 0, output.length);
    if (engine.destroyed) return fallback(body);
    const outputLeft = state[0] ?? 0;
    const inputLeft = state[1] ?? 1;
    handle.reset();
    if (inputLeft !== 0 || outputLeft === 0) return fallback(body);
    // A copy: `output` is written again by the next body while this one is still being sent.
    return Buffer.from(output.subarray(0, output.length - outputLeft));
  };
}
