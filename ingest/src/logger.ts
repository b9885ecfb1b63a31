/** The process's one pino root logger; components take children (docs/architecture.md#code-conventions). */
import { type DestinationStream, type Logger, pino } from 'pino';

/** `destination`: stdout by default; tests pass a stream to read what was logged. */
export function createLogger(level: string, name = 'ingest', destination?: DestinationStream): Logger {
  const options = { name, level, base: { pid: process.pid } };
  return destination ? pino(options, destination) : pino(options);
}
