/**
 * µs since the epoch → ISO 8601 UTC with microseconds, like every timestamp of the contract. A
 * page's change times mostly share their second: its `YYYY-MM-DDTHH:MM:SS.` is kept from the last
 * call rather than formatted by a Date each time (the change feed formats one per item: a Date
 * and its toISOString cost ~0.5–1 µs, several percent of a feed page's CPU). Safe integers only
 * (years 1684..2255, always four digits); anything else takes the general form.
 */
let lastSecond = Number.NaN;
let lastPrefix = '';

export function isoMicros(us: number): string {
  if (!Number.isSafeInteger(us)) return isoMicrosOf(us);
  const second = Math.floor(us / 1_000_000);
  if (second !== lastSecond) {
    lastPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    lastSecond = second;
  }
  return `${lastPrefix}${String(us - second * 1_000_000).padStart(6, '0')}Z`;
}

/** The general form (one Date per call). */
function isoMicrosOf(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}
