/**
 * What the soak's partners got back (pipeline/soak.ts): answers by kind of partner and status,
 * and the moment of every 5xx and every failed connection, so the run can tell the ones a rebuild
 * or the api's restart explains from the ones nothing does.
 */

export interface Incident {
  /** Seconds since the load started. */
  readonly t: number;
  readonly kind: string;
  readonly company: string;
  /** An HTTP status (5xx), or `network` for a request that got no answer. */
  readonly status: number | 'network';
  readonly detail: string;
}

export interface Window {
  readonly from: number;
  readonly to: number;
  /** Only incidents of this company are explained by it (a rebuild); all when undefined (a restart). */
  readonly company?: string;
  /** Only this status is explained by it (a rebuild: 503, the company out of service). */
  readonly status?: number;
}

export class Tally {
  readonly #startedAt: number;
  readonly counts: Record<string, Record<string, number>> = {};
  readonly incidents: Incident[] = [];

  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  record(kind: string, company: string, status: number | 'network', detail = ''): void {
    const byStatus = this.counts[kind] ?? {};
    this.counts[kind] = byStatus;
    byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1;
    if (status === 'network' || status >= 500)
      this.incidents.push({
        t: (performance.now() - this.#startedAt) / 1000,
        kind,
        company,
        status,
        detail: detail.slice(0, 200),
      });
  }
}

/** The incidents no window explains: a 503 of a company being rebuilt, anything while the api restarts. */
export function unexplained(incidents: readonly Incident[], windows: readonly Window[]): Incident[] {
  return incidents.filter(
    (i) =>
      !windows.some(
        (w) =>
          i.t >= w.from &&
          i.t <= w.to &&
          (w.company === undefined || w.company === i.company) &&
          (w.status === undefined || w.status === i.status),
      ),
  );
}
