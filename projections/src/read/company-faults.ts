import type { ProjectionDb } from '../model/open.ts';

/**
 * Companies out of service (control.sqlite `company_faults`): the writer records them
 * (write/files/company-faults.ts), the api answers 503 for them.
 */

export type CompanyFaultState = 'damaged' | 'rebuilding';

export interface CompanyFault {
  readonly companyId: string;
  readonly state: CompanyFaultState;
  readonly reason: string;
  readonly detectedAtMs: number;
  readonly movedTo: string | null;
  readonly rebuildStartedAtMs: number | null;
}

interface FaultRow {
  company_id: string;
  state: CompanyFaultState;
  reason: string;
  detected_at_ms: number;
  moved_to: string | null;
  rebuild_started_at_ms: number | null;
}

const toFault = (r: FaultRow): CompanyFault => ({
  companyId: r.company_id,
  state: r.state,
  reason: r.reason,
  detectedAtMs: r.detected_at_ms,
  movedTo: r.moved_to,
  rebuildStartedAtMs: r.rebuild_started_at_ms,
});

/** Every company out of service, read from control.sqlite (the api's reader uses this too). */
export function readCompanyFaults(db: ProjectionDb): CompanyFault[] {
  return (
    db
      .prepare(
        `SELECT company_id, state, reason, detected_at_ms, moved_to, rebuild_started_at_ms
         FROM company_faults ORDER BY company_id`,
      )
      .all() as FaultRow[]
  ).map(toFault);
}
