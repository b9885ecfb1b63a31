/**
 * The victim of bench/tenants/noisy-neighbour.ts, a child process of its own (forked with an IPC channel),
 * so the hostile load generator's work never delays the victim's timing on a shared event loop:
 * `GET /v1/sites?limit=50` one request at a time, following links.next and starting over after
 * the last page, from 127.0.0.1. The parent names the phase each request is counted in
 * (`{ phase }`, null = not counted) and asks for the samples (`{ stop: true }`); the child then
 * sends them and exits. It also exits when the parent goes away.
 *
 *   argv: <api base URL> <key>
 */
import { answerCode, httpClient, nextLink } from './noisy-neighbour-http.ts';

export interface VictimPhase {
  /** ms of each 2xx answer, in order. */
  readonly ms: number[];
  /** Every other answer by status and problem code, with its ms. */
  readonly refused: { code: string; ms: number }[];
  /** Requests that got no answer (reset, timeout). */
  readonly errors: string[];
}

export type VictimMessage = { phase: string | null } | { stop: true };
export type VictimReport = { ready: true } | { phases: Record<string, VictimPhase> };

const [base, key] = process.argv.slice(2);
if (base === undefined || key === undefined || process.send === undefined)
  throw new Error(
    'tenants/parts/noisy-neighbour-victim.ts: fork it with <base URL> <key> and an IPC channel',
  );
const send = process.send.bind(process);
const client = httpClient('127.0.0.1', 1, 30_000);
const headers = { authorization: `Bearer ${key}` };
const first = `${base}/v1/sites?limit=50`;
const phases: Record<string, VictimPhase> = {};
let phase: string | null = null;
let stopping = false;

process.on('disconnect', () => process.exit(0));
process.on('message', (message: VictimMessage) => {
  if ('stop' in message) stopping = true;
  else phase = message.phase;
});

let url = first;
send({ ready: true } satisfies VictimReport);
while (!stopping) {
  const counted = phase;
  if (counted !== null && phases[counted] === undefined)
    phases[counted] = { ms: [], refused: [], errors: [] };
  const into = counted === null ? undefined : phases[counted];
  try {
    const answer = await client.get(url, headers);
    if (answer.status >= 200 && answer.status < 300) {
      into?.ms.push(answer.ms);
      url = nextLink(answer) ?? first;
    } else {
      into?.refused.push({ code: answerCode(answer), ms: answer.ms });
    }
  } catch (error) {
    into?.errors.push(error instanceof Error ? error.message : String(error));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
client.close();
send({ phases } satisfies VictimReport, () => process.exit(0));
