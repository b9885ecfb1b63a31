// Staying connected to the change feed with Server-Sent Events (docs/partners.md, "Stay connected"):
// the EventSource pattern of a browser page, run here by Node. A browser's own EventSource cannot
// send an Authorization header, so this one is the `eventsource` package's (the browser's API, plus
// a `fetch` option): its fetch adds the key. It reconnects by itself whenever the stream ends (at
// its lifetime) or is cut, sending the id of the last position event as Last-Event-ID, so the api
// continues right after it. Each line printed is a change, a position, or a (re)connection.
//
//   PDA_BASE_URL=https://api.example.com PDA_API_KEY=svc_pk_… node event-source.ts
import { EventSource } from 'eventsource';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const apiKey = env('PDA_API_KEY');
// From the start of the sites' feed (every site, then every change); a page that stored a
// position's links.next would start from it instead (with live=true added).
const source = new EventSource(`${env('PDA_BASE_URL')}/v1/changes?filter[type]=sites&live=true`, {
  fetch: (url, init) =>
    fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${apiKey}` } }),
});

// Node only (a browser page stays open by itself): the EventSource's wait before it reconnects
// does not keep the process running, this does until the source is closed.
const running = setInterval(() => undefined, 60_000);

source.addEventListener('open', () => console.log('connected'));
source.addEventListener('message', (event) => {
  // A change, as the feed's pages have them: upsert by type and id, or remove.
  const change = JSON.parse(event.data) as { op: string; type: string; id: string };
  console.log(`${change.op} ${change.type}/${change.id}`);
});
source.addEventListener('position', (event) => {
  // Everything before it is applied: store links.next (a browser: in localStorage) to start there later.
  const position = JSON.parse(event.data) as { links: { next: string }; caught_up: boolean };
  console.log(`position${position.caught_up ? ' (caught up)' : ''}`);
});
source.addEventListener('problem', (event) => {
  // The stream cannot go on (sync_window_expired: the data was rebuilt): start again from an empty copy.
  const { error } = JSON.parse(event.data) as { error: { code: string } };
  console.error(`the feed stopped: ${error.code}`);
  source.close();
  clearInterval(running);
});
