/**
 * Soak benchmark (NOT a test; test/soak.e2e.test.ts runs the same code for 3 minutes and asserts
 * bounds): does the whole pipeline run for half an hour without anything growing?
 *
 *   bash dev-world/stack/stack.sh up
 *   pnpm --filter @pda/bench exec node pipeline/soak.ts [--minutes 30|60|3] [--suffix S]
 *        [--rate 150] [--companies 3] [--followers 4] [--sample-seconds 10] [--warmup-seconds 120] [--no-plot]
 *
 * Ingest and the api as child processes (their start scripts' commands) on a fresh data directory
 * and a new consumer group of the running stack; a writer commits `rate` changes/s to a few
 * companies' sites and services in PostgreSQL; partners page, sync with tokens, poll with
 * If-None-Match, follow the change feed with `wait` and one live NDJSON stream; one company rebuild
 * and one api restart on the way (pipeline/parts/soak-run.ts). Every `sample-seconds`: memory,
 * descriptors, company files, WAL/SHM, held requests and streams, statement caches, lag and
 * commit → visible. Writes results/soak-<date>[-suffix].md (verdict per figure), .json (every
 * sample) and .png (pipeline/parts/soak-plot.py, matplotlib pinned in scripts/lib/matplotlib.sh).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { FIGURES } from './parts/soak-figures.ts';
import { renderSoakReport } from './parts/soak-report.ts';
import { runSoak, SOAK_DEFAULTS } from './parts/soak-run.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    minutes: { type: 'string', default: String(SOAK_DEFAULTS.minutes) },
    suffix: { type: 'string' },
    rate: { type: 'string', default: String(SOAK_DEFAULTS.rate) },
    companies: { type: 'string', default: String(SOAK_DEFAULTS.companies) },
    followers: { type: 'string', default: String(SOAK_DEFAULTS.followers) },
    'sample-seconds': { type: 'string', default: String(SOAK_DEFAULTS.sampleSeconds) },
    'warmup-seconds': { type: 'string', default: String(SOAK_DEFAULTS.warmupSeconds) },
    'no-plot': { type: 'boolean', default: false },
  },
});
const minutes = Number(args.minutes);
if (!(minutes >= 1))
  throw new Error('--minutes: at least 1 (30 by default; 60 and 3 are the other variants)');
const suffix = args.suffix ?? (minutes === SOAK_DEFAULTS.minutes ? '' : `${minutes}min`);

const result = await runSoak({
  ...SOAK_DEFAULTS,
  minutes,
  rate: Number(args.rate),
  companies: Number(args.companies),
  followers: Number(args.followers),
  sampleSeconds: Number(args['sample-seconds']),
  warmupSeconds: Number(args['warmup-seconds']),
  log: (line) => process.stderr.write(`soak: ${line}\n`),
});

const name = `soak-${result.startedAt.slice(0, 10)}${suffix ? `-${suffix}` : ''}`;
const json = join(resultsDir, `${name}.json`);
const png = join(resultsDir, `${name}.png`);
writeFileSync(
  json,
  `${JSON.stringify(
    {
      title: `soak ${result.startedAt.slice(0, 16)}Z, ${minutes} min, ${result.inputs.rate} changes/s (${result.code.commit})`,
      warmupSeconds: result.inputs.warmupSeconds,
      figures: FIGURES,
      events: [
        { name: 'rebuild', from: result.rebuild.from, to: result.rebuild.to },
        { name: 'api restart', from: result.apiRestart.from, to: result.apiRestart.to },
      ],
      samples: result.samples,
      result,
    },
    null,
    1,
  )}\n`,
);
let plotted = false;
if (!args['no-plot']) {
  try {
    execFileSync('bash', [join(import.meta.dirname, 'parts/soak-plot.sh'), json, png], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    plotted = true;
  } catch (error) {
    process.stderr.write(`soak: no plot (${error instanceof Error ? error.message : String(error)})\n`);
  }
}
const md = join(resultsDir, `${name}.md`);
writeFileSync(
  md,
  renderSoakReport(result, { json: relative(repoRoot, json), png: plotted ? relative(repoRoot, png) : null }),
);
process.stdout.write(`${relative(repoRoot, md)}\n`);
process.exit(0);
