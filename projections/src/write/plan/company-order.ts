import type { Plan } from './plan.ts';

/**
 * The order of a batch's company transactions. Open files first, then the others: when the batch
 * spans more companies than the cache holds, only those beyond the bound are reopened, not every
 * one. Companies are independent, except that a file moved rows take values from commits after the
 * files that receive them (`plan.precedes`, apply-company.ts readCarried): such a file waits for
 * them and goes as soon as the last one is done. Planning keeps `precedes` acyclic, so every
 * company gets its turn.
 */
export function companyOrder(plan: Plan, isOpen: (companyId: string) => boolean): string[] {
  const preferred: string[] = [];
  const closed: string[] = [];
  for (const companyId of plan.companies.keys()) (isOpen(companyId) ? preferred : closed).push(companyId);
  preferred.push(...closed);
  if (plan.precedes.size === 0) return preferred;

  const waitingFor = new Map<string, number>();
  for (const after of plan.precedes.values()) {
    for (const companyId of after) waitingFor.set(companyId, (waitingFor.get(companyId) ?? 0) + 1);
  }
  const order: string[] = [];
  const deferred = new Set<string>();
  const take = (companyId: string): void => {
    order.push(companyId);
    for (const next of plan.precedes.get(companyId) ?? []) {
      const left = (waitingFor.get(next) ?? 1) - 1;
      waitingFor.set(next, left);
      if (left === 0 && deferred.delete(next)) take(next);
    }
  };
  for (const companyId of preferred) {
    if ((waitingFor.get(companyId) ?? 0) > 0) deferred.add(companyId);
    else take(companyId);
  }
  if (deferred.size > 0) throw new Error(`company transactions in a cycle: ${[...deferred].join(', ')}`);
  return order;
}
