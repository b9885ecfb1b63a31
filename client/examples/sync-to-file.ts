// A partner's sync program (docs/partners.md), with @pda/client: keeps a copy of every resource of
// the company in a JSON file. The first run exports everything; each later run applies what changed
// since the previous successful run started: deletions, then records, in the order received.
//
//   PDA_BASE_URL=https://api.example.com PDA_API_KEY=svc_pk_… PDA_STATE_FILE=copy.json node sync-to-file.ts
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createClient, SyncWindowExpiredError } from '@pda/client';

const RESOURCES = [
  ['sites', { include: 'contacts' }],
  ['services', {}],
  ['equipment', { include: 'category' }],
  ['equipment-categories', {}],
  ['consumables', {}],
] as const;

interface State {
  /** When the last successful run started, or null before the first run. */
  lastRunStart: string | null;
  /** resource → id → the record as the api presents it. */
  records: Record<string, Record<string, unknown>>;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const stateFile = env('PDA_STATE_FILE');
const state: State = existsSync(stateFile)
  ? JSON.parse(readFileSync(stateFile, 'utf8'))
  : { lastRunStart: null, records: {} };
// 429, 5xx and network errors are retried (Retry-After honoured); any other error answer throws ApiError.
const client = createClient({ baseUrl: env('PDA_BASE_URL'), apiKey: env('PDA_API_KEY') });

// Key rotation: once a replacement key is issued, this one works until `revokes_at`.
const { api_key: key } = (await client.me()).data;
if (key.revokes_at !== null)
  console.warn(`${key.identifier} stops working at ${key.revokes_at}: switch keys`);

const runStart = new Date().toISOString(); // taken before the first request of the run

async function exportEverything(): Promise<void> {
  for (const [resource, query] of RESOURCES) {
    const copy: Record<string, unknown> = {};
    for await (const record of client.exportAll(resource, { query })) copy[record.id] = record;
    state.records[resource] = copy;
  }
}

let changes = 0;
if (state.lastRunStart === null) {
  await exportEverything();
} else {
  try {
    for (const [resource, query] of RESOURCES) {
      const copy = state.records[resource] ?? {};
      state.records[resource] = copy;
      for await (const change of client.syncSince(resource, state.lastRunStart, { query })) {
        changes += 1;
        // Upsert by id: what arrives later is newer. A deletion of an id never received: nothing to do.
        if (change.kind === 'record') copy[change.record.id] = change.record;
        else delete copy[change.deletion.id];
      }
    }
  } catch (error) {
    if (!(error instanceof SyncWindowExpiredError)) throw error;
    // The deletions since the last run are no longer all kept (35 days by default): start over.
    console.warn('sync window expired: exporting everything again');
    state.records = {};
    await exportEverything();
  }
}

state.lastRunStart = runStart; // only once the run has succeeded
writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
renameSync(`${stateFile}.tmp`, stateFile);
const held = RESOURCES.map(
  ([resource]) => `${Object.keys(state.records[resource] ?? {}).length} ${resource}`,
);
console.log(`${changes} changes applied; the copy holds ${held.join(', ')}`);
