// The CLI's text: progress lines for stderr and the human-readable report for stdout.
import type { Difference, ReconcileProgress, ReconcileReport } from './types.ts';

const n = (value: number) => value.toLocaleString('en-US');
const plural = (count: number, one: string, many: string) => `${n(count)} ${count === 1 ? one : many}`;

/**
 * The progress lines worth showing: every chunk of a large table, a company that is large, has
 * rows to read again or is the last one, else at most one company line every `everyMs` (thousands
 * of small companies must not print thousands of lines), and each round of re-reading.
 */
export function progressPrinter(
  write: (line: string) => void,
  { largeRows = 50_000, largeCompanyRows = 10_000, everyMs = 5_000, now = () => Date.now() } = {},
): (progress: ReconcileProgress) => void {
  let lastCompanyLine = now();
  return (progress) => {
    const line = formatProgress(progress, largeRows);
    if (line === undefined) return;
    if (progress.kind === 'company') {
      const notable =
        progress.rows >= largeCompanyRows || progress.candidates > 0 || progress.index === progress.count;
      if (!notable && now() - lastCompanyLine < everyMs) return;
      lastCompanyLine = now();
    }
    write(line);
  };
}

/** One line per progress event, or undefined (a small table's end says nothing on its own). */
export function formatProgress(progress: ReconcileProgress, largeRows = 50_000): string | undefined {
  switch (progress.kind) {
    case 'table':
      if (progress.done && progress.rows < largeRows) return undefined;
      return `reconcile: ${progress.companyId ?? 'control'} ${progress.table}: ${n(progress.rows)} rows${progress.done ? ' (done)' : ''}`;
    case 'company':
      return `reconcile: company ${progress.index}/${progress.count} ${progress.companyId}: ${n(progress.rows)} rows${progress.candidates > 0 ? `, ${n(progress.candidates)} to read again` : ''}`;
    case 'recheck':
      return `reconcile: reading ${n(progress.rows)} differing rows again (round ${progress.round}${progress.waitingFor ? `, once the projection is current through ${progress.waitingFor}` : ''})`;
  }
}

/** A value for one line: JSON, cut at `max` characters. */
function shown(value: unknown, max = 160): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function differenceLines(difference: Difference): string[] {
  const lines = [
    `  ${difference.kind.padEnd(9)} ${difference.companyId ?? '-'} ${difference.table} ${difference.id}`,
  ];
  for (const column of difference.columns ?? []) {
    lines.push(
      `      ${column.name}: source ${shown(column.source)}, projection ${shown(column.projection)}`,
    );
  }
  return lines;
}

export function formatReport(report: ReconcileReport): string {
  const t = report.totals;
  const lines = [
    `checked ${plural(t.companies, 'company', 'companies')}, ${plural(t.tables, 'table', 'tables')}: ${n(t.sourceRows)} source rows, ${n(t.projectionRows)} projection rows in ${(report.durationMs / 1000).toFixed(1)} s (${n(report.rowsPerSecond)} rows/s)`,
  ];
  if (t.differences > 0) {
    lines.push(
      `differences: ${n(t.differences)} (missing ${n(t.missing)}, extra ${n(t.extra)}, different ${n(t.different)})`,
    );
    for (const difference of report.differences) lines.push(...differenceLines(difference));
  }
  if (report.notCaughtUp) {
    const current = report.notCaughtUp.projectionCurrentAt ?? 'never';
    lines.push(
      `not caught up: ${report.notCaughtUp.reason}; the projection is known current through ${current}, needed ${report.notCaughtUp.needed}`,
    );
    lines.push(`unsettled (may be in flight): ${n(t.unsettled)}`);
    for (const difference of report.unsettled) lines.push(...differenceLines(difference));
  }
  if (report.verifiedThrough) {
    lines.push(`verified through: LSN ${report.verifiedThrough.lsn} (${report.verifiedThrough.at})`);
  }
  lines.push(
    report.ok
      ? 'result: no differences'
      : `result: ${t.differences > 0 ? 'differences found' : 'not caught up'}`,
  );
  return `${lines.join('\n')}\n`;
}
