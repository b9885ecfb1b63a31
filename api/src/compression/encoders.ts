import {
  type BrotliCompress,
  brotliCompressSync,
  constants,
  createBrotliCompress,
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
 * thread pool cost more than the compression itself at these sizes (bench/api/compression.ts).
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
   * gzip, deflate and brotli through one engine per coding, restarted after each body, instead of
   * a new engine per body (zlib's *Sync): see reusableEngine.
   */
  readonly reuseEngines: boolean;
}

/** Encodes a whole body: a string is taken as UTF-8. */
export type Encoder = (body: string | Buffer) => Buffer;

export function encoders(settings: CompressionSettings): Record<Coding, Encoder> {
  const level = settings.zlibLevel;
  const gzip: Encoder = (body) => gzipSync(body, { level });
  const deflate: Encoder = (body) => deflateSync(body, { level });
  const brotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality } };
  const brotli: Encoder = (body) => brotliCompressSync(body, brotliOptions);
  const zstd = { params: { [constants.ZSTD_c_compressionLevel]: settings.zstdLevel } };
  const reuse = settings.reuseEngines;
  return {
    gzip: (reuse && reusableZlib(createGzip({ level }), gzip)) || gzip,
    deflate: (reuse && reusableZlib(createDeflate({ level }), deflate)) || deflate,
    br: (reuse && reusableBrotli(settings.brotliQuality, brotli)) || brotli,
    zstd: (body) => zstdCompressSync(body, zstd),
  };
}

/** What reusableEngine uses of a zlib or brotli stream: the native handle Node's own *Sync functions drive. */
interface EngineInternals {
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
    init?(params: Uint32Array, writeState: Uint32Array, processCallback: () => void): boolean;
  };
  /** [output bytes left, input bytes left] after a write. */
  readonly _writeState?: Uint32Array;
}

type EngineHandle = NonNullable<EngineInternals['_handle']>;

/** Bodies above this go through the fallback, so the kept buffers stay small. */
const REUSE_MAX_BYTES = 1 << 20;

/** A gzip or deflate engine: zlib's reset keeps its level. */
function reusableZlib(engine: Gzip | Deflate, fallback: Encoder): Encoder | undefined {
  return reusableEngine(engine, constants.Z_FINISH, (handle) => handle.reset(), fallback);
}

/**
 * A brotli engine. Brotli's reset makes an encoder with the default quality (11, far slower), so
 * the engine is initialised again with the quality, as the stream's constructor does.
 */
function reusableBrotli(quality: number, fallback: Encoder): Encoder | undefined {
  const engine = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: quality } });
  const { _handle: handle, _writeState: state } = engine as unknown as EngineInternals;
  if (typeof handle?.init !== 'function' || !(state instanceof Uint32Array)) return undefined;
  // The constructor's parameter array: one slot per BROTLI_PARAM_*, 0xFFFFFFFF = not set.
  const params = new Uint32Array(16).fill(0xffffffff);
  params[constants.BROTLI_PARAM_QUALITY] = quality;
  const ignore = () => {};
  return reusableEngine(
    engine,
    constants.BROTLI_OPERATION_FINISH,
    (native) => {
      if (native.init?.(params, state, ignore) === false) throw new Error('brotli init failed');
    },
    fallback,
  );
}

/**
 * An encoder that keeps one engine, one input and one output buffer for every body. zlib's *Sync
 * functions build a new stream object and native engine (~300 KB for zlib) per call, and a string
 * becomes a new Buffer first: per response, that garbage costs the api more CPU than the
 * compression (V8's collector runs far more often; bench/api/compression.ts measures both). This
 * drives the engine's native handle the way those functions do, one finishing write and a restart.
 * The handle is internal to node:zlib: when it is not there as expected this returns undefined
 * and the caller uses `fallback`, as it does after a failed write or restart (tests/encoders.test.ts
 * decodes every coding, so a change in Node shows there).
 */
function reusableEngine(
  engine: Gzip | Deflate | BrotliCompress,
  finish: number,
  restart: (handle: EngineHandle) => void,
  fallback: Encoder,
): Encoder | undefined {
  const { _handle: handle, _writeState: state } = engine as unknown as EngineInternals;
  if (typeof handle?.writeSync !== 'function' || typeof handle.reset !== 'function') return undefined;
  if (!(state instanceof Uint32Array) || state.length < 2) return undefined;
  // A failed write destroys the engine (node:zlib cannot recover one): from then on, the fallback.
  engine.on('error', () => {});
  let broken = false;
  let input = Buffer.allocUnsafe(64 * 1024);
  let output = Buffer.allocUnsafe(64 * 1024);
  return (body) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = typeof body === 'string' ? 3 * body.length : body.length;
    // Stored blocks bound deflate's output (5 bytes per 16 KiB block plus header and trailer), and
    // brotli's (4 bytes per 16 KiB plus 6).
    const bound = most + 5 * Math.ceil(most / 16_384) + 64;
    if (broken || engine.destroyed || bound > REUSE_MAX_BYTES) return fallback(body);
    let bytes: Buffer;
    if (typeof body === 'string') {
      if (input.length < most) input = Buffer.allocUnsafe(most);
      bytes = input.subarray(0, input.write(body));
    } else {
      bytes = body;
    }
    if (output.length < bound) output = Buffer.allocUnsafe(bound);
    handle.writeSync(finish, bytes, 0, bytes.length, output, 0, output.length);
    if (engine.destroyed) return fallback(body);
    const outputLeft = state[0] ?? 0;
    const inputLeft = state[1] ?? 1;
    try {
      restart(handle);
    } catch {
      broken = true;
      return fallback(body);
    }
    if (inputLeft !== 0 || outputLeft === 0) return fallback(body);
    // A copy: `output` is written again by the next body while this one is still being sent.
    return Buffer.from(output.subarray(0, output.length - outputLeft));
  };
}
