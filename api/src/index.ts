export { type AppDeps, buildApp } from './app.ts';
export type { Coding, CompressionSettings } from './compression/encoders.ts';
export { type Config, ConfigError, parseConfig } from './config.ts';
export { CONTRACT_FILE, loadContract } from './contract/load-contract.ts';
export { COMPRESSION } from './plugins/compress.ts';
export { startServer } from './server.ts';
