// A partner following the change feed (docs/partners.md, "Follow the feed"), with @pda/client:
// keeps a copy of every resource of the company in a JSON file, together with the feed's position.
// The first run starts from the beginning of the feed (every record, then every change); each later
// run applies what changed since the stored position, page by page, and stops once caught up.
// With PDA_FOLLOW=forever it does not stop: once caught up, each request waits for the next change.
//
//   PDA_BASE_URL=https://api.example.com PDA_API_KEY=svc_pk_… PDA_STATE_FILE=feed.json node follow-to-file.ts
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createClient, SyncWindowExpiredError } from '@pda/client';

interface State {
  /** Where the feed continues: the position of the last page applied (none before the first run). */
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

/** The copy and its position are written together, after each page: a crash loses no more than a page. */
function save(): void {
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
  renameSync(`${stateFile}.tmp`, stateFile);
}

async function follow(): Promise<number> {
  let changes = 0;
  const pages = client.follow({
    ...(state.position === undefined ? {} : { from: state.position }),
    include: { sites: 'contacts', equipment: 'category' },
    untilCaughtUp: process.env.PDA_FOLLOW !== 'forever',
  });
  for await (const page of pages) {
    for (const change of page.changes) {
      const records = state.records[change.type] ?? {};
      state.records[change.type] = records;
      if (change.op === 'delete')
        delete records[change.id]; // an id never received: nothing to do
      else records[change.id] = change.data as Record<string, unknown>; // upsert by id
      changes += 1;
    }
    state.position = page.position;
    save();
  }
  return changes;
}

let changes: number;
try {
  changes = await follow();
} catch (error) {
  if (!(error instanceof SyncWindowExpiredError)) throw error;
  // The position is older than the deletions kept, or the company's data was rebuilt: start over.
  console.warn('the feed position expired: following again from the start into a new copy');
  state = { records: {} };
  changes = await follow();
}

const held = Object.keys(state.records)
  .sort()
  .map((type) => `${Object.keys(state.records[type] ?? {}).length} ${type}`);
console.log(`${resumed ? changes : 0} changes applied; the copy holds ${held.join(', ')}`);
