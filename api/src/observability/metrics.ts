/**
 * Prometheus metrics of one api process, in a Registry of its own, served on the admin port
 * (@pda/admin-http, started by server.ts), never on the public one. Names are prefixed pda_api_; api/README.md
 * ("Metrics") lists them.
 *
 * Label values are bounded by construction: `operation` is a contract operationId or `unmatched`
 * (never a URL), `status` an HTTP status code, `reason` one of REFUSAL_REASONS.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CompanyFileCounts, StatementCacheCounts } from '../company-files/projection-files.ts';
import type { ShareRefusal } from '../rate-limit/fair-shares.ts';

/** The label of requests no contract operation answered: unknown paths, 405s, preflights. */
export const UNMATCHED = 'unmatched';

/**
 * Why a request was refused to protect the service: `rate_limit_exceeded` is the 429 problem code
 * (plugins/rate-limit.ts; also the cap of requests in flight per forwarded address,
 * plugins/connection-limits.ts), `under_pressure` the load shedding's 503 service_unavailable
 * (plugins/under-pressure.ts; `service_unavailable` alone would also name unreadable projections),
 * `too_many_connections` a connection closed on arrival beyond the process's bound (server.ts),
 * `connections_per_address` one closed on arrival beyond its address's cap and `request_timeout`
 * one closed because its request headers or request did not arrive in time
 * (connections/connection-limits.ts); `in_progress_per_key`, `in_progress_per_company` and `held_per_key`
 * the 429 too_many_requests_in_progress of a fair share (rate-limit/fair-shares.ts) and
 * `held_per_process` the change feed's 503 when the process holds API_MAX_HELD_REQUESTS
 * (changes/held-requests.ts).
 */
export type RefusalReason =
  | 'rate_limit_exceeded'
  | 'under_pressure'
  | 'too_many_connections'
  | 'connections_per_address'
  | 'request_timeout'
  | ShareRefusal
  | 'held_per_process';

/**
 * What became of a request at the hop between api nodes of writers split by company
 * (plugins/forward.ts). On the node the partner reached: `served_by_owner` (the owner answered,
 * whatever its status), `owner_unreachable` (refused, reset, timed out: 503) or `partner_gone`
 * (the partner's connection closed before the answer came back: the hop aborted). On the owner:
 * `hop_served` (a trusted hop answered here), `hop_refused` (a wrong secret: 401) or
 * `hop_not_owner` (a trusted hop for a company this node does not serve: 503, ownership files out
 * of step).
 */
export type ForwardOutcome =
  | 'served_by_owner'
  | 'owner_unreachable'
  | 'partner_gone'
  | 'hop_served'
  | 'hop_refused'
  | 'hop_not_owner';

/** What the gauges read at scrape time. */
export interface MetricsSources {
  /** The read cache of company files: lookups, evictions, files open and the bound. */
  readonly companyFiles: () => CompanyFileCounts;
  /** The prepared statements of the open files: held, and evicted to stay within their bound. */
  readonly statements: () => StatementCacheCounts;
  /** The staleness /v1/health judges by (company-files/projections-health.ts); null (gauge absent) when unknown. */
  readonly stalenessSeconds: () => number | null;
}

export interface ApiMetrics {
  readonly registry: Registry;
  /**
   * One answered request (a 429 also counts as a refusal: `refusal` when the request names why,
   * else rate_limit_exceeded); `operation` undefined = no contract operation (UNMATCHED). Never
   * throws: a failure goes to `onFailure`.
   */
  recordRequest(
    operation: string | undefined,
    statusCode: number,
    seconds: number,
    refusal?: RefusalReason | null,
  ): void;
  recordRefusal(reason: RefusalReason): void;
  /** One request at the hop between api nodes (writers split by company). */
  recordForward(outcome: ForwardOutcome): void;
}

/** Fast-API buckets: most answers take a millisecond or two, a deep page or a cold file more. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface OperationSeries {
  readonly observe: (seconds: number) => void;
  /** Counter children by status code, created on first use. */
  readonly count: Map<number, () => void>;
}

export function createMetrics(sources: MetricsSources, onFailure: (error: unknown) => void): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pda_api_' });
  const requests = new Counter({
    name: 'pda_api_requests_total',
    help: 'Answered requests by contract operationId (unmatched: no operation) and HTTP status',
    labelNames: ['operation', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'pda_api_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by contract operationId',
    labelNames: ['operation'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const forwarded = new Counter({
    name: 'pda_api_forwarded_total',
    help: 'Requests at the hop between api nodes of writers split by company, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'pda_api_rate_limited_total',
    help: 'Requests refused to protect the service, by reason: rate_limit_exceeded and the fair shares (429), under_pressure and held_per_process (503), connections closed on arrival',
    labelNames: ['reason'],
    registers: [registry],
  });
  new Gauge({
    name: 'pda_api_open_company_files',
    help: 'Company projection files held open for reading (bounded by pda_api_open_company_files_max)',
    registers: [registry],
    collect() {
      this.set(sources.companyFiles().open);
    },
  });
  new Gauge({
    name: 'pda_api_open_company_files_max',
    help: 'Bound of the read cache of company files (API_MAX_OPEN_COMPANIES, or from the descriptor limit)',
    registers: [registry],
    collect() {
      this.set(sources.companyFiles().max);
    },
  });
  // Counted by the cache itself (company-files/projection-files.ts); copied here at scrape time.
  new Counter({
    name: 'pda_api_company_file_lookups_total',
    help: 'Company file lookups by the read cache: hit (already open) or miss (opened for the request)',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      const counts = sources.companyFiles();
      this.reset();
      this.inc({ result: 'hit' }, counts.hits);
      this.inc({ result: 'miss' }, counts.misses);
    },
  });
  new Counter({
    name: 'pda_api_company_files_evicted_total',
    help: 'Company files closed to make room in the read cache (requests spread over more companies than the bound)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.companyFiles().evictions);
    },
  });
  new Gauge({
    name: 'pda_api_statement_cache_size',
    help: 'Prepared statements held over control.sqlite and the open company files (at most API_MAX_STATEMENTS_PER_FILE each)',
    registers: [registry],
    collect() {
      this.set(sources.statements().held);
    },
  });
  new Counter({
    name: 'pda_api_statement_cache_evictions_total',
    help: 'Prepared statements dropped to stay within API_MAX_STATEMENTS_PER_FILE per open file (prepared again on their next use)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.statements().evicted);
    },
  });
  new Gauge({
    name: 'pda_api_projection_staleness_seconds',
    help: 'Seconds the projections lag behind their source, as /v1/health judges it; absent when unknown',
    registers: [registry],
    collect() {
      const seconds = sources.stalenessSeconds();
      if (seconds === null) this.remove();
      else this.set(seconds);
    },
  });

  // Children resolved once per label set: a request costs two map lookups and no label object of
  // ours (prom-client still hashes the child's labels on each increment).
  const series = new Map<string, OperationSeries>();
  const seriesOf = (operation: string): OperationSeries => {
    let found = series.get(operation);
    if (found === undefined) {
      found = { observe: duration.labels(operation).observe, count: new Map() };
      series.set(operation, found);
    }
    return found;
  };
  return {
    registry,
    recordRequest(operation, statusCode, seconds, refusal) {
      try {
        const s = seriesOf(operation ?? UNMATCHED);
        let count = s.count.get(statusCode);
        if (count === undefined) {
          count = requests.labels(operation ?? UNMATCHED, String(statusCode)).inc;
          s.count.set(statusCode, count);
        }
        count();
        s.observe(seconds);
        if (statusCode === 429) refused.inc({ reason: refusal ?? 'rate_limit_exceeded' });
      } catch (error) {
        onFailure(error);
      }
    },
    recordRefusal(reason) {
      refused.inc({ reason });
    },
    recordForward(outcome) {
      try {
        forwarded.inc({ outcome });
      } catch (error) {
        onFailure(error);
      }
    },
  };
}
