/**
 * The result document of a soak (pipeline/soak.ts): the machine and inputs, the figures'
 * verdicts, the samples once a minute (all of them go to the JSON beside it), and what the run
 * checked at the end. Pure: the run's result in, markdown out.
 */
import { FIGURES, type FigureSummary, type SoakSample, summarize, VERDICT_RULE } from './soak-figures.ts';
import type { SoakResult } from './soak-run.ts';

const fmt = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined || !Number.isFinite(x)
    ? '—'
    : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });

/** The sample nearest each whole minute of the run (t = 0 included), in order, no repeats. */
export function minuteSamples(samples: readonly SoakSample[]): SoakSample[] {
  if (samples.length === 0) return [];
  const last = samples.at(-1)?.t ?? 0;
  const picked: SoakSample[] = [];
  for (let minute = 0; minute * 60 <= last + 30; minute++) {
    let best: SoakSample | undefined;
    for (const s of samples)
      if (!best || Math.abs(s.t - minute * 60) < Math.abs(best.t - minute * 60)) best = s;
    if (best && Math.abs(best.t - minute * 60) <= 30 && picked.at(-1) !== best) picked.push(best);
  }
  return picked;
}

const COLUMNS: readonly { head: string; value: (s: SoakSample) => string }[] = [
  { head: 'min', value: (s) => fmt(s.t / 60, 1) },
  { head: 'api #', value: (s) => (s.apiGeneration === 0 ? 'down' : String(s.apiGeneration)) },
  ...FIGURES.map((f) => ({ head: f.key, value: (s: SoakSample) => fmt(s.values[f.key], 2) })),
];

export function samplesTable(samples: readonly SoakSample[]): string {
  const rows = samples.map((s) => `| ${COLUMNS.map((c) => c.value(s)).join(' | ')} |`);
  return [
    `| ${COLUMNS.map((c) => c.head).join(' | ')} |`,
    `|${COLUMNS.map(() => '---:').join('|')}|`,
    ...rows,
  ].join('\n');
}

export function verdictTable(summaries: readonly FigureSummary[]): string {
  const byKey = new Map<string, (typeof FIGURES)[number]>(FIGURES.map((f) => [f.key, f]));
  const rows = summaries.map((s) => {
    const f = byKey.get(s.key);
    const unit = f?.unit ? ` ${f.unit}` : '';
    return `| ${f?.label ?? s.key} (\`${s.key}\`) | ${fmt(s.first, 2)} | ${fmt(s.last, 2)} | ${fmt(s.max, 2)} | ${fmt(s.growthPerHour, 2)}${unit}/h | ${fmt(s.tolerance, 2)} | ${s.fittedSamples} | **${s.verdict}** |`;
  });
  return [
    '| figure | first | last | max | growth per hour | tolerance | fitted samples | verdict |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
  ].join('\n');
}

export function renderSoakReport(result: SoakResult, files: { json: string; png: string | null }): string {
  const summaries = summarize(result.samples, result.inputs.warmupSeconds);
  const m = result.machine;
  const requests = Object.entries(result.requests)
    .map(
      ([kind, byStatus]) =>
        `${kind}: ${Object.entries(byStatus)
          .map(([status, n]) => `${status} × ${n}`)
          .join(', ')}`,
    )
    .join('; ');
  const checks = result.endCheck.tables
    .map(
      (t) =>
        `${t.company.slice(0, 8)} ${t.table}: ${t.source} rows, ${t.missing} missing, ${t.stale} stale, ${t.extra} extra`,
    )
    .join('; ');
  const grows = summaries.filter((s) => s.verdict === 'GROWS');
  return `# Soak: the whole pipeline for ${result.inputs.minutes} minutes (${result.startedAt.slice(0, 10)})

\`pnpm --filter @pda/bench exec node pipeline/soak.ts --minutes ${result.inputs.minutes}\` (bench/README.md, "soak").
All ${result.samples.length} samples: \`${files.json}\`${files.png ? `; plot: \`${files.png}\`` : ''}.

**Machine**: ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB, kernel ${m.kernel}, Node ${m.node}; load average
${m.loadAverage.start.join(' / ')} at the start, ${m.loadAverage.end.join(' / ')} at the end. Code: ${result.code.commit}${
    result.code.uncommitted.length > 0 ? ` with uncommitted ${result.code.uncommitted.join(', ')}` : ''
  }.

**Inputs**: ${result.inputs.companies} written companies and a quiet one (${result.inputs.seedRows} sites and services each to
start), ${result.inputs.rate} changes/s to sites and services (inserts, updates, deletes around 300 rows per table),
partners: a pager (/v1/sites, 50 a page), a token sync of services per written company (every 5 s), 304 polls of a
written and the quiet company (every 1 s), ${result.inputs.followers} change-feed followers (\`wait=10\`) and one live NDJSON
stream; a sample every ${result.inputs.sampleSeconds} s, warm-up ${result.inputs.warmupSeconds} s; api settings
${JSON.stringify(result.inputs.apiEnv)}. Ingest caught up with the stack's topics and the api served every company
${fmt(result.catchUpSeconds)} s after ingest started (before t = 0).

**Events**: company ${result.rebuild.company} rebuilt from t = ${fmt(result.rebuild.from, 0)} s to ${fmt(result.rebuild.to, 0)} s
(${result.rebuild.outcome}); the api stopped at t = ${fmt(result.apiRestart.from, 0)} s and the new one answered at
${fmt(result.apiRestart.to, 0)} s.${result.eventError ? ` **Failed**: ${result.eventError}.` : ''}

## Verdicts

${VERDICT_RULE}${
  result.loadSeconds - result.inputs.warmupSeconds < 600
    ? ` This run fits only ${fmt((result.loadSeconds - result.inputs.warmupSeconds) / 60)} min of samples: its growth per hour extrapolates noise; read its verdicts, not its slopes.`
    : ''
}

${verdictTable(summaries)}

${grows.length === 0 ? 'No figure GROWS.' : `**GROWS**: ${grows.map((s) => `\`${s.key}\` (${fmt(s.growthPerHour, 2)}/h)`).join(', ')}.`}

## At the end (load stopped)

- Lag back to 0 ${result.lagDrainSeconds === null ? 'NOT within 120 s' : `in ${fmt(result.lagDrainSeconds)} s after the writer stopped`};
  held requests ${fmt(result.final.values.held_requests, 0)}, open streams ${fmt(result.final.values.open_streams, 0)};
  descriptors ingest ${fmt(result.final.values.ingest_fds, 0)} (baseline ${fmt(result.baseline.values.ingest_fds, 0)}),
  api ${fmt(result.final.values.api_fds, 0)} (baseline ${fmt(result.baseline.values.api_fds, 0)}).
- PostgreSQL against the api (${fmt(result.endCheck.seconds)} s): **${result.endCheck.differences} differences**. ${checks}.
- Writer: ${Object.entries(result.writer.committed)
    .map(([op, n]) => `${op} ${n}`)
    .join(', ')}; ${result.writer.transactions}
  transactions, ${result.writer.lateTicks} late ticks, ${result.writer.errors} errors${result.writer.lastError ? ` (${result.writer.lastError})` : ''}.
- Requests: ${requests}.
- Live stream: ${result.stream.connections} connections, ${result.stream.changes} changes, ${result.stream.heartbeats} heartbeats,
  ${result.stream.errorLines} error lines.
- 5xx and failed connections: ${result.incidents.length}, of which **${result.unexplained.length} unexplained** (the rest: 503 of the
  company under rebuild, or anything during the api's restart); the api processes counted ${result.api5xx.map((n) => fmt(n, 0)).join(' and ')} 5xx.
${result.unexplained
  .slice(0, 10)
  .map((i) => `  - t = ${fmt(i.t)} s ${i.kind} ${i.status}: ${i.detail}`)
  .join('\n')}
- Error log lines: ingest ${result.logErrors.ingest.length}, api ${result.logErrors.api.length}.

## Samples, once a minute

${samplesTable([...minuteSamples(result.samples), { ...result.final, t: result.final.t }])}

The last row is the sample after the load stopped and the pipeline drained.
`;
}
