/**
 * How many decoded events the apply side may hold, and so merge into one apply call. A company's
 * transaction costs about as much as a few dozen row writes (one WAL append of every page it
 * touched), so a group spread over thousands of companies with a few events each spends its time
 * in commits (bench/results/tenant-fanout-2026-11-25.md). The bound therefore follows the width of
 * the last apply call: room for about EVENTS_PER_COMPANY events per company it touched, never less
 * than `base` (what a narrow stream needs) nor more than `wide` (the memory an operator allows).
 */

/** Events per company per apply call at which a commit costs little beside its rows (measured). */
export const EVENTS_PER_COMPANY = 20;

export interface GroupBound {
  /** Events in flight (and merged into one apply call) allowed now. */
  current(): number;
  /** Companies the last apply call touched. */
  observe(companies: number): void;
}

export function createGroupBound(base: number, wide: number): GroupBound {
  const ceiling = Math.max(base, wide);
  let bound = base;
  return {
    current: () => bound,
    observe(companies) {
      bound = Math.min(ceiling, Math.max(base, companies * EVENTS_PER_COMPANY));
    },
  };
}
