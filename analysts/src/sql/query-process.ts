// The `sql` command's query in a process of its own, so that --timeout can stop it at any point,
// also inside one long SQLite step (query-with-timeout.ts): reads a QueryRequest as JSON on stdin,
// prints the rows on stdout; on failure one message on stderr and exit code 1.
import { openReader } from '@pda/projections/model';
import type { QueryRequest } from './query-with-timeout.ts';
import { prepareReadOnly } from './read-only-statement.ts';
import { writeResult } from './write-result.ts';

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as QueryRequest;
try {
  const db = openReader(request.path);
  try {
    await writeResult(prepareReadOnly(db, request.sql), request.output, process.stdout);
  } finally {
    db.close();
  }
} catch (error) {
  process.stderr.write(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
