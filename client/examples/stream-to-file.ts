// A partner exporting a company in one request and staying connected (docs/partners.md, "Export in
// one request" and "Stay connected"), with @pda/client: keeps a copy of every resource of the company
// in a JSON file, together with the feed's position. The first run streams the whole feed from its
// start (every record, then every change) in one response; each later run streams what changed
// since the stored position, and stops once caught up. With PDA_FOLLOW=forever it stays connected
// (`live`): each commit's changes arrive as they land, and the client reconnects by itself whenever
// a stream ends or is cut, from the last position it yielded.
//
//   PDA_BASE_URL=https://api.example.com PDA_API_KEY=svc_pk_… PDA_STATE_FILE=stream.json node stream-to-file.ts
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createClient, SyncWindowExpiredError } from '@pda/client';

interface State {
  /** Where the feed continues: the position of the last chunk applied (none before the first run). */
  position?: string;
  /** type → id → the record as the api presents it. */
  records: Record<string, Record<string, unknown>>;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const stateFile = env('PDA_STATE_FILE');
let state: State = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : { records: {} };
const client = createClient({ baseUrl: env('PDA_BASE_URL'), apiKey: env('PDA_API_KEY') });
const resumed = state.position !== undefined;

/** The copy and its position are written together, after each chunk: a crash loses no more than a chunk. */
function save(): void {
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
  renameSync(`${stateFile}.tmp`, stateFile);
}

async function stream(): Promise<number> {
  let changes = 0;
  const chunks = client.stream({
    ...(state.position === undefined ? {} : { from: state.position }),
    include: { sites: 'contacts', equipment: 'category' },
    live: process.env.PDA_FOLLOW === 'forever',
  });
  for await (const chunk of chunks) {
    for (const change of chunk.changes) {
      const records = state.records[change.type] ?? {};
      state.records[change.type] = records;
      if (change.op === 'delete')
        delete records[change.id]; // an id never received: nothing to do
      else records[change.id] = change.data as Record<string, unknown>; // upsert by id
      changes += 1;
    }
    state.position = chunk.position;
    save();
  }
  return changes;
}

let changes: number;
try {
  changes = await stream();
} catch (error) {
  if (!(error instanceof SyncWindowExpiredError)) throw error;
  // The position is older than the deletions kept, or the company's data was rebuilt: start over.
  console.warn('the feed position expired: streaming again from the start into a new copy');
  state = { records: {} };
  changes = await stream();
}

const held = Object.keys(state.records)
  .sort()
  .map((type) => `${Object.keys(state.records[type] ?? {}).length} ${type}`);
console.log(`${resumed ? changes : 0} changes applied; the copy holds ${held.join(', ')}`);
