/**
 * Progress of a long copy on stderr: at most one line every `everyMs` (nothing at all for a copy
 * that ends sooner), then one closing line. rows/s is over the whole copy so far; the ETA assumes
 * the same rate for the rows left (`total` is counted up front, so it is an estimate while ingest
 * writes).
 */

export interface Progress {
  add(rows: number): void;
  /** Ends the copy: prints `<label>: N rows in T s (R rows/s)<suffix>` and returns the row count. */
  done(suffix?: string): number;
}

export interface ProgressOptions {
  readonly label: string;
  readonly total: number;
  readonly write?: (line: string) => void;
  readonly everyMs?: number;
  readonly now?: () => number;
  /** Extra text for each progress line (e.g. "2/300 companies"). */
  readonly detail?: () => string;
}

const number = new Intl.NumberFormat('en-US');

export function formatCount(value: number): string {
  return number.format(Math.round(value));
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? (() => performance.now());
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const everyMs = options.everyMs ?? 2_000;
  const started = now();
  let rows = 0;
  let nextAt = started + everyMs;
  const rate = (at: number): number => rows / Math.max((at - started) / 1000, 1e-3);
  return {
    add(count) {
      rows += count;
      const at = now();
      if (at < nextAt) return;
      nextAt = at + everyMs;
      const perSecond = rate(at);
      const left = Math.max(options.total - rows, 0);
      const percent =
        options.total > 0 ? ` (${Math.min(100, Math.floor((rows / options.total) * 100))} %)` : '';
      const eta = perSecond > 0 ? `, ETA ${formatDuration(left / perSecond)}` : '';
      const detail = options.detail ? `, ${options.detail()}` : '';
      write(
        `${options.label}: ${formatCount(rows)} / ${formatCount(options.total)} rows${percent}${detail}, ${formatCount(perSecond)} rows/s${eta}`,
      );
    },
    done(suffix = '') {
      const at = now();
      write(
        `${options.label}: ${formatCount(rows)} rows in ${formatDuration((at - started) / 1000)} (${formatCount(rate(at))} rows/s)${suffix}`,
      );
      return rows;
    },
  };
}
