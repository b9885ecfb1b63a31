/**
 * The tenant fan-out benchmark's result document (bench/results/tenant-fanout-<date>.md): machine,
 * code, inputs, an ingest table and an api table with every row's ratio to its peer, errors shown.
 */

import type { CodeState, Machine } from '../../shared/machine.ts';
import type { NofileLimit } from '../../shared/process-stats.ts';
import type { IngestResult } from '../../shared/run-ingest.ts';
import type { Spread } from '../../shared/tenant-events.ts';
import type { ApiResult } from './fanout-api.ts';

export interface CaseResult {
  readonly companies: number;
  readonly spread: Spread;
  readonly role: 'peer' | 'case';
  readonly dataEvents: number;
  readonly setupEvents: number;
  readonly fill: { readonly seconds: number; readonly bytes: number };
  readonly ingest: IngestResult;
  readonly api: ApiResult;
  readonly seconds: number;
}

export interface ReportInput {
  readonly date: string;
  /** The script and its arguments as run. */
  readonly command: string;
  readonly machine: Machine;
  readonly code: CodeState;
  readonly inputs: {
    readonly size: string;
    readonly dataEventsPerCase: number;
    readonly request: string;
    readonly connections: number;
    readonly durationSeconds: number;
    readonly warmupSeconds: number;
    readonly zipfExponent: number;
    readonly biggestTenantShare: Record<string, number>;
    readonly environment: Record<string, string | undefined>;
  };
  readonly results: readonly CaseResult[];
  readonly totalSeconds: number;
}

const mean = (xs: readonly number[]) =>
  xs.length > 0 ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 : null;
const fmt = (x: number | null | undefined, digits = 0) =>
  x === null || x === undefined
    ? '–'
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratio = (x: number | null | undefined, peer: number | null) =>
  x === null || x === undefined || peer === null || peer === 0 ? null : Math.round((x / peer) * 1000) / 1000;
const mb = (bytes: number | undefined) => fmt(bytes === undefined ? null : bytes / 2 ** 20, 1);
const kb = (bytes: number | undefined) => fmt(bytes === undefined ? null : bytes / 1024);

export function renderReport(input: ReportInput) {
  const { results, machine, inputs, code } = input;
  const peerRuns = (companies: number) =>
    results.filter((r) => r.role === 'peer' && r.companies === companies);
  const ingestPeerRuns = peerRuns(10)
    .map((r) => r.ingest.steadyDataEventsPerSecond)
    .filter((x) => x !== null);
  const ingestPeerOpenRuns = peerRuns(10)
    .map((r) => r.ingest.everyFileOpenDataEventsPerSecond)
    .filter((x) => x !== null);
  const apiPeerRuns = peerRuns(1).flatMap((r) => (r.api.measurement ? [r.api.measurement] : []));
  const peers = {
    ingest10Companies: {
      steadyEventsPerSecond: ingestPeerRuns.map(Math.round),
      mean: mean(ingestPeerRuns),
      everyFileOpenMean: mean(ingestPeerOpenRuns),
    },
    api1Company: {
      requestsPerSecond: apiPeerRuns.map((m) => m.requestsPerSecond),
      p99Ms: apiPeerRuns.map((m) => m.p99Ms),
      meanRequestsPerSecond: mean(apiPeerRuns.map((m) => m.requestsPerSecond)),
      meanP99Ms: mean(apiPeerRuns.map((m) => m.p99Ms)),
    },
  };
  const cases = results.map((r) => ({
    ...r,
    ratios: {
      ingestTo10CompanyPeer: ratio(r.ingest.steadyDataEventsPerSecond, peers.ingest10Companies.mean),
      everyFileOpenTo10CompanyPeer: ratio(
        r.ingest.everyFileOpenDataEventsPerSecond,
        peers.ingest10Companies.everyFileOpenMean,
      ),
      apiRequestsPerSecondTo1CompanyPeer: ratio(
        r.api.measurement?.requestsPerSecond,
        peers.api1Company.meanRequestsPerSecond,
      ),
      apiP99To1CompanyPeer: ratio(r.api.measurement?.p99Ms, peers.api1Company.meanP99Ms),
    },
  }));

  const seen = new Map<string, number>();
  const label = (r: CaseResult) => {
    if (r.role !== 'peer') return '';
    const key = `${r.companies}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    return seen.get(key) === 1 ? 'peer (first)' : 'peer (last)';
  };
  const labels = cases.map(label);
  const deadLetters = (r: CaseResult) => r.ingest.outcomes.dead_lettered ?? 0;
  const ingestResult = (r: CaseResult) => {
    const problems = [
      r.ingest.failure,
      deadLetters(r) > 0 ? `${deadLetters(r)} dead letters` : null,
      r.ingest.logErrors > 0 ? `${r.ingest.logErrors} error log lines` : null,
      r.ingest.stoppedInTime ? null : 'did not stop within 60 s of SIGTERM (killed)',
      r.ingest.stoppedInTime && r.ingest.exitCode !== null && r.ingest.exitCode !== 0
        ? `exit code ${r.ingest.exitCode} after SIGTERM`
        : null,
    ].filter(Boolean);
    return problems.length === 0 ? 'ok' : `**${problems.join('; ')}**`;
  };
  const cache = (r: CaseResult) => {
    const opened = r.ingest.fileCache.company_files_opened_total;
    const evicted = r.ingest.fileCache.company_files_evicted_total;
    const bound = r.ingest.fileCache.open_company_files_max;
    if (opened === undefined && evicted === undefined) return '–';
    return `${fmt(opened)} / ${fmt(evicted)}${bound === undefined ? '' : ` (bound ${fmt(bound)})`}`;
  };
  const ingestRows = cases.map((r, i) => {
    const d = r.ingest.disk;
    const p = d?.perCompanyFile;
    return `| ${fmt(r.companies)} | ${r.spread} | ${labels[i]} | ${fmt(d?.companyFiles)} | ${fmt(r.ingest.steadyDataEventsPerSecond)} | ${fmt(r.ratios.ingestTo10CompanyPeer, 2)} | ${fmt(r.ingest.everyFileOpenDataEventsPerSecond)} | ${fmt(r.ratios.everyFileOpenTo10CompanyPeer, 2)} | ${fmt(r.ingest.startupSeconds, 1)} | ${fmt(r.ingest.process?.peakRssMb)} | ${fmt(r.ingest.process?.openFds)} | ${cache(r)} | ${mb(d?.sqliteBytes)} / ${mb(d?.walBytes)} / ${mb(d?.shmBytes)} | ${kb(p?.sqliteMedianBytes)} / ${kb(p?.sqliteMaxBytes)} | ${kb(p?.withWalShmMedianBytes)} / ${kb(p?.withWalShmMaxBytes)} | ${r.ingest.logWarnings} | ${ingestResult(r)} |`;
  });
  const apiResult = (r: CaseResult) => {
    const m = r.api.measurement;
    const problems = [
      r.api.failure,
      m && m.requests === 0 ? 'no request completed' : null,
      m && m.non2xx > 0 ? `${m.non2xx} non-2xx` : null,
      m && m.errors > 0 ? `${m.errors} errors` : null,
    ].filter(Boolean);
    return problems.length === 0 ? 'ok' : `**${problems.join('; ')}**`;
  };
  const apiRows = cases.map((r, i) => {
    const m = r.api.measurement;
    const p = r.api.process;
    return `| ${fmt(r.companies)} | ${r.spread} | ${labels[i]} | ${fmt(m?.requestsPerSecond)} | ${fmt(r.ratios.apiRequestsPerSecondTo1CompanyPeer, 2)} | ${fmt(m?.p50Ms)} | ${fmt(m?.p99Ms)} | ${fmt(r.ratios.apiP99To1CompanyPeer, 2)} | ${fmt(p?.rssMb)} / ${fmt(p?.peakRssMb)} | ${fmt(p?.openFds)} | ${fmt(m?.requests)} | ${apiResult(r)} |`;
  });
  const drift = (runs: readonly number[]) =>
    runs.length === 2 && runs[0] ? `${fmt(((runs[1] ?? 0) / runs[0] - 1) * 100)} %` : 'n/a';
  const limit = (l: NofileLimit) => `${l.soft} soft / ${l.hard} hard`;
  const children =
    typeof machine.childrenNofile === 'string'
      ? 'the same (inherited)'
      : `set with \`${machine.childrenNofile.via}\``;
  const childLimit = cases.find((r) => r.ingest.nofile)?.ingest.nofile;
  const shares = Object.entries(inputs.biggestTenantShare)
    .map(([k, v]) => `${k} ${fmt(v * 100, v < 0.01 ? 2 : 1)} %`)
    .join(', ');
  const env = Object.entries(inputs.environment).map(([k, v]) => `\`${k}=${v}\``);
  const changed = code.uncommitted.map((f) => `\`${f}\``).join(', ');
  const { ingest10Companies: ingestPeer, api1Company: apiPeer } = peers;

  const paragraphs = [
    `# Tenant fan-out benchmark — ${input.date}`,
    `Run with \`pnpm --filter @pda/bench exec node ${input.command}\` (bench/README.md). Not a test; every figure below is as measured, nothing edited.`,
    `**Machine:** ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GiB RAM, Linux ${machine.kernel}, Node ${machine.node}. ` +
      `Descriptor limit (RLIMIT_NOFILE) of the benchmark: ${limit(machine.nofile)}; of the ingest and api children: ${children}` +
      `${childLimit ? ` (read from /proc: ${limit(childLimit)})` : ''}. ` +
      `Load average (1/5/15 min) ${machine.loadAverage.start.join(' / ')} at the start, ${machine.loadAverage.end.join(' / ')} at the end: ` +
      'the load generator, Kafka and both children share these cores with anything else running.',
    `**Code:** commit ${code.commit}${changed ? `, with uncommitted changes to ${changed} (the working tree was measured)` : ''}.`,
    `**Inputs:** per case, fresh topics on the stack's Kafka with real-shaped Debezium events (JsonConverter with inline schemas, as the shipped connector writes them): ` +
      'a `companies` row per company, one API key (`sites:read`) and its grant of every company (setup: 2 × companies + 1 events), ' +
      `then ${fmt(inputs.dataEventsPerCase)} change events (one site per company first, then 40 % sites, 15 % services, 15 % site contacts, ` +
      '10 % each equipment, consumables, categories; 80 % creates, 20 % updates), companies drawn by the spread: ' +
      `uniform, or Zipf with s = ${inputs.zipfExponent} (the biggest tenant's share: ${shares}). ` +
      'Ingest: the real worker (its defaults, log level warn) in a child process from a new consumer group into a fresh data directory; ' +
      '**steady** = change events per second from the first applied chunk on (setup events are applied inside that window but not counted, and every company file is created in it); ' +
      "**once every file is open** = the same from the moment the writer has opened every company's file (changes to existing tenants, no file creation; empty when fewer than a tenth of the events came after). " +
      "Peak RSS is the process's VmHWM; descriptors (`/proc/<pid>/fd`) and disk are read once every event is handled, " +
      'with the worker still running and its files open; disk is allocated bytes (what du counts). ' +
      `Api: a child process on that directory, \`${inputs.request}\` with the multi-company key, \`X-Service-Company\` drawn per request from the same spread, ` +
      `one request per company first (ten at a time: a long-running api holds every file it serves open), then autocannon ${inputs.connections} connections, ${inputs.durationSeconds} s after ${inputs.warmupSeconds} s of warm-up; RSS (now / peak) and descriptors at the end.` +
      (env.length > 0
        ? ` Settings from the environment (both children inherit them): ${env.join(', ')}.`
        : ''),
    '**Peers** (same run, same events and duration), each measured first and again last: ' +
      `ingest over 10 companies uniform, ${ingestPeer.steadyEventsPerSecond.map((x) => fmt(x)).join(' and ')} events/s (drift ${drift(ingestPeer.steadyEventsPerSecond)}); ` +
      `the api over 1 company, ${apiPeer.requestsPerSecond.map((x) => fmt(x)).join(' and ')} req/s (drift ${drift(apiPeer.requestsPerSecond)}), ` +
      `p99 ${apiPeer.p99Ms.join(' and ')} ms. Ratios are to the mean of the two runs. **Total run time:** ${fmt(input.totalSeconds / 60, 1)} min.`,
    '## Ingest',
    [
      '| companies | spread | | company files | steady events/s | × 10-company peer | events/s once every file is open | × peer | start-up s | peak RSS MB | open fds | writer files opened / evicted (bound) | `*.sqlite` / `*-wal` / `*-shm` MB | company file KB (median / max) | with its -wal, -shm KB (median / max) | warnings | errors |',
      '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---|',
      ...ingestRows,
    ].join('\n'),
    '## Api',
    [
      '| companies | spread | | req/s | × 1-company peer | p50 ms | p99 ms | p99 × peer | RSS MB (now / peak) | open fds | requests | errors |',
      '|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|',
      ...apiRows,
    ].join('\n'),
  ];
  const markdown = `${paragraphs.join('\n\n')}\n`;
  return { markdown, peers, cases };
}
