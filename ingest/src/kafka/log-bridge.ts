/** kafkajs' own log lines → the process's pino logger (child `component: kafkajs`). */
import { type LogEntry, logLevel } from 'kafkajs';
import type { Logger } from 'pino';

export function kafkaLogCreator(logger: Logger) {
  const child = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, timestamp: _t, logger: _l, ...extra } = log;
      if (level === logLevel.ERROR) child.error(extra, message);
      else if (level === logLevel.WARN) child.warn(extra, message);
      else if (level === logLevel.INFO) child.info(extra, message);
      else child.debug(extra, message);
    };
}
