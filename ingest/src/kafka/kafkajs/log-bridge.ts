/** kafkajs' own log lines → the process's pino logger (child `component: kafkajs`). */
import { type LogEntry, logLevel } from 'kafkajs';
import type { Logger } from 'pino';
import { isSaslAuthenticationLog } from './errors.ts';

/**
 * kafkajs logs every error answer of a broker at error level, also those it handles itself: a
 * topic another client has just created (CreateTopics while Debezium creates the same topic), a
 * member the coordinator already dropped (LeaveGroup after a kill), a coordinator that moved. An
 * answer that does fail the call reaches ingest as the call's error, which ingest logs itself; so
 * these lines are warnings, and error level stays for what needs somebody.
 */
const isBrokerAnswer = (namespace: string, message: unknown): boolean =>
  namespace === 'Connection' && typeof message === 'string' && message.startsWith('Response ');

export function kafkaLogCreator(logger: Logger) {
  const child = logger.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _t, logger: _l, ...extra } = log;
      // Refused credentials end the worker with one line of its own (../auth-failure.ts); kafkajs's
      // three lines per attempt stay available at debug.
      if (level <= logLevel.WARN && isSaslAuthenticationLog(message, extra.error))
        child.debug(extra, message);
      else if (level === logLevel.ERROR && !isBrokerAnswer(namespace, message)) child.error(extra, message);
      else if (level <= logLevel.WARN) child.warn(extra, message);
      else if (level === logLevel.INFO) child.info(extra, message);
      else child.debug(extra, message);
    };
}
