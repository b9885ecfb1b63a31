/** The pipeline benchmark's JSON as Markdown: one table per variant, then the ratios the targets name. */

import type { CpuSample } from '../shared/process-cpu.ts';
import type { StageResult } from './stages.ts';

interface Variant {
  readonly rows: number;
  readonly shape: string;
  readonly format: string;
  readonly seedSeconds: number;
  readonly stages: readonly StageResult[];
}

interface Report {
  readonly machine: {
    cpus: number;
    model?: string | undefined;
    loadAverageAtStart: number;
    loadAverageAtEnd: number;
  };
  readonly settings: { connector: Record<string, string>; ingest: Record<string, string> };
  readonly variants: readonly Variant[];
}

const PROCESSES: readonly (keyof CpuSample)[] = ['postgres', 'connect', 'kafka', 'registry', 'bench'];
const LABEL: Record<keyof CpuSample, string> = {
  postgres: 'PostgreSQL',
  connect: 'Connect',
  kafka: 'Kafka',
  registry: 'registry',
  bench: 'ingest',
};

const num = (n: number) => n.toLocaleString('en-US');
const summed = (cpu: CpuSample) => PROCESSES.reduce((sum, p) => sum + cpu[p], 0);
const usPerEvent = (seconds: number, events: number) => Math.round((seconds * 1e6) / events);

function variantTable(v: Variant, cores: number): string {
  const byName = new Map(v.stages.map((s) => [s.stage, s]));
  const lines = [
    `### ${num(v.rows)} rows, ${v.shape === 'one' ? 'one company' : 'many companies'}, ${v.format} (seed ${v.seedSeconds} s)`,
    '',
    `| stage | s | events/s | CPU µs/event: ${PROCESSES.map((p) => LABEL[p]).join(' / ')} | summed | cores busy |`,
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const s of v.stages) {
    const steady = s.steadyEventsPerSecond ? ` (steady ${num(s.steadyEventsPerSecond)})` : '';
    lines.push(
      `| ${s.stage} | ${s.seconds} | ${num(s.eventsPerSecond)}${steady} | ${PROCESSES.map((p) => usPerEvent(s.cpuSeconds[p], s.events)).join(' / ')} | ${usPerEvent(summed(s.cpuSeconds), s.events)} | ${s.coresBusy} |`,
    );
  }
  const whole = byName.get('whole');
  const ingest = byName.get('ingest');
  const snapshot = byName.get('snapshot');
  const streaming = byName.get('streaming');
  const notes: string[] = [];
  if (whole && ingest) {
    notes.push(`whole ÷ ingest alone: **${(whole.eventsPerSecond / ingest.eventsPerSecond).toFixed(2)}**`);
    // The rate both cores allow if every process spent what it spent in the whole run, no waiting.
    const cpuBound = whole.events / (summed(whole.cpuSeconds) / cores);
    notes.push(
      `whole ÷ the rate its summed CPU allows on ${cores} cores (${num(Math.round(cpuBound))}/s): **${(whole.eventsPerSecond / cpuBound).toFixed(2)}**`,
    );
  }
  if (snapshot && streaming) {
    notes.push(
      `snapshot ÷ streaming: **${(snapshot.eventsPerSecond / streaming.eventsPerSecond).toFixed(2)}**`,
    );
  }
  for (const s of v.stages) if (s.note) notes.push(`${s.stage}: ${s.note}`);
  return [...lines, '', ...notes.map((n) => `- ${n}`)].join('\n');
}

export function renderPipelineReport(report: Report): string {
  const m = report.machine;
  const head = [
    `Machine: ${m.cpus} cores (${m.model ?? 'unknown'}); load average ${m.loadAverageAtStart.toFixed(2)} at the start, ${m.loadAverageAtEnd.toFixed(2)} at the end.`,
    `Settings over the stack's: connector ${JSON.stringify(report.settings.connector)}, ingest ${JSON.stringify(report.settings.ingest)}.`,
    '',
  ];
  return [...head, ...report.variants.map((v) => variantTable(v, m.cpus))].join('\n\n');
}

/**
 * Before/after pairs: the same variant run with two settings (two pipeline/stages.ts documents each, same
 * order), one table per variant with each stage's events/s and summed CPU µs/event side by side.
 */
export function renderPipelinePairs(pairs: readonly { before: Report; after: Report }[]): string {
  const lines = [
    '| variant | stage | events/s before → after | × | CPU µs/event summed, before → after | Connect µs/event | Kafka µs/event | ingest µs/event |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const ratios: string[] = [];
  for (const { before, after } of pairs) {
    for (const [i, b] of before.variants.entries()) {
      const a = after.variants[i];
      if (!a) continue;
      const name = `${num(b.rows)} ${b.shape === 'one' ? 'one company' : 'many'} ${b.format}`;
      for (const s of b.stages) {
        const t = a.stages.find((x) => x.stage === s.stage);
        if (!t) continue;
        const us = (r: StageResult, p?: keyof CpuSample) =>
          usPerEvent(p ? r.cpuSeconds[p] : summed(r.cpuSeconds), r.events);
        lines.push(
          `| ${name} | ${s.stage} | ${num(s.eventsPerSecond)} → ${num(t.eventsPerSecond)} | ${(t.eventsPerSecond / s.eventsPerSecond).toFixed(2)} | ${us(s)} → ${us(t)} | ${us(s, 'connect')} → ${us(t, 'connect')} | ${us(s, 'kafka')} → ${us(t, 'kafka')} | ${us(s, 'bench')} → ${us(t, 'bench')} |`,
        );
      }
      const ratio = (r: Variant) => {
        const whole = r.stages.find((x) => x.stage === 'whole');
        const ingest = r.stages.find((x) => x.stage === 'ingest');
        if (!whole || !ingest) return 'n/a';
        const cpuBound = whole.events / (summed(whole.cpuSeconds) / before.machine.cpus);
        return `${(whole.eventsPerSecond / ingest.eventsPerSecond).toFixed(2)} of ingest alone, ${(whole.eventsPerSecond / cpuBound).toFixed(2)} of the CPU-bound rate`;
      };
      ratios.push(`- ${name}: whole pipeline before ${ratio(b)}; after ${ratio(a)}`);
    }
  }
  const loads = pairs
    .map(
      (p) =>
        `${p.before.machine.loadAverageAtStart.toFixed(1)}/${p.after.machine.loadAverageAtStart.toFixed(1)}`,
    )
    .join(', ');
  return [
    ...lines,
    '',
    ...ratios,
    '',
    `Load average at the start of each run (before/after): ${loads}.`,
  ].join('\n');
}

// `node pipeline/report.ts before.json after.json [before2.json after2.json …]`: the pairs as Markdown.
if (import.meta.main) {
  const { readFileSync } = await import('node:fs');
  const files = process.argv.slice(2);
  if (files.length === 0 || files.length % 2 !== 0) {
    process.stderr.write(
      'usage: node pipeline/report.ts before.json after.json [before.json after.json …]\n',
    );
    process.exit(2);
  }
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Report;
  const pairs = [];
  for (let i = 0; i < files.length; i += 2) {
    pairs.push({ before: read(files[i] as string), after: read(files[i + 1] as string) });
  }
  process.stdout.write(`${renderPipelinePairs(pairs)}\n`);
}
