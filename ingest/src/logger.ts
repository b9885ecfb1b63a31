/** The process's one pino root logger; components take children (notes/style.md). */
import { type Logger, pino } from 'pino';

export function createLogger(level: string, name = 'ingest'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}
