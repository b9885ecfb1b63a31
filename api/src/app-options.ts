import type { CompressionSettings } from './compression/encoders.ts';
import type { Config } from './config.ts';

/** What buildApp hands every autoloaded plugin and route file. */
export interface AppOptions {
  readonly config: Config;
  /** Wall clock in ms (injected so tests can move time for expiry and revocation). */
  readonly now: () => number;
  /** The OpenAPI document to serve (tests may point at a copy). */
  readonly contractFile?: string | undefined;
  /** Replaces the compression settings of plugins/compress.ts (bench/api/compression.ts compares them). */
  readonly compression?: CompressionSettings | undefined;
}
