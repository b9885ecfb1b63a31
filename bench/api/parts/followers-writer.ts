/**
 * The marker writer of bench/api/followers.ts: `rate` new sites a second in the stack's PostgreSQL,
 * marker i in company i mod companies, one INSERT per transaction, paced by the schedule (a slow
 * commit does not lower the rate). Each site's name is its marker; the time its COMMIT returned is
 * recorded, the start of every commit → follower latency.
 */
import type pg from 'pg';

export interface Marker {
  readonly company: number;
  committedAt?: number;
}

export async function writeMarkers(options: {
  readonly pool: pg.Pool;
  readonly companyIds: readonly string[];
  readonly run: string;
  readonly rate: number;
  readonly seconds: number;
  readonly markers: Map<string, Marker>;
  readonly nowMs: () => number;
}): Promise<{ written: number; seconds: number }> {
  const total = Math.round(options.rate * options.seconds);
  const start = options.nowMs();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / options.rate;
    const wait = due - options.nowMs();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const company = i % options.companyIds.length;
    const name = `${options.run}-${i}`;
    const marker: Marker = { company };
    options.markers.set(name, marker);
    const write = options.pool
      .query(`INSERT INTO sites (company_id, name, city) VALUES ($1, $2, 'Lyon')`, [
        options.companyIds[company],
        name,
      ])
      .then(() => {
        marker.committedAt = options.nowMs();
      });
    inFlight.add(write);
    write.finally(() => inFlight.delete(write)).catch(() => {});
  }
  await Promise.all(inFlight);
  return { written: total, seconds: (options.nowMs() - start) / 1000 };
}
