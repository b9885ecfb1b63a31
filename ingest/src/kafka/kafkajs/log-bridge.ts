/** kafkajs' own log lines → the process's pino logger (child `component: kafkajs`). */
import { type LogEntry, logLevel } from 'kafkajs';
import type { Logger } from 'pino';
import { isSaslAuthenticationLog } from './errors.ts';

export function kafkaLogCreator(logger: Logger) {
  const child = logger.child({ component: 'kafkajs' });
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, timestamp: _t, logger: _l, ...extra } = log;
      // Refused credentials end the worker with one line of its own (../auth-failure.ts); kafkajs's
      // three lines per attempt stay available at debug.
      if (level <= logLevel.WARN && isSaslAuthenticationLog(message, extra.error))
        child.debug(extra, message);
      else if (level === logLevel.ERROR) child.error(extra, message);
      else if (level === logLevel.WARN) child.warn(extra, message);
      else if (level === logLevel.INFO) child.info(extra, message);
      else child.debug(extra, message);
    };
}
