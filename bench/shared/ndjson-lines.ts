import type { Readable } from 'node:stream';

/**
 * Calls `onLine` with each line of an NDJSON body as it arrives, parsed (a line is handed over
 * once its newline has come; empty lines are skipped). For the feed readers of bench/api/feed-stream.ts
 * and the live follower of bench/pipeline/freshness.ts.
 */
export function onJsonLines<T>(body: Readable, onLine: (line: T) => void): void {
  let pending = '';
  body.setEncoding('utf8');
  body.on('data', (text: string) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line !== '') onLine(JSON.parse(line) as T);
  });
}
