/**
 * The worker's per-company rebuilds (company-rebuild.ts does one): started by the admin port or
 * `Worker.rebuildCompany`, one at a time, through the writer of the generation being written.
 */
import { companyPartition, isUuid, type SourceTable } from '@pda/projections/model';
import type { Logger } from 'pino';
import type { ApplySink } from '../apply-thread/sink.ts';
import type { ColumnType } from '../decode/index.ts';
import type { AvroSupport } from '../schema-registry/index.ts';
import { type CompanyRebuildConfig, type CompanyRebuildResult, rebuildCompany } from './company-rebuild.ts';

/** The generation being written: its writer, its consumer group, and the signal that ends it. */
export interface LiveGeneration {
  readonly sink: ApplySink;
  readonly groupId: string;
  readonly signal: AbortSignal;
}

/** A per-company rebuild as /rebuild reports it. */
export interface RebuildStatus {
  companyId: string;
  status: 'running' | 'done' | 'failed';
  startedAt: string;
  result?: CompanyRebuildResult;
  error?: string;
}

/**
 * Per-company rebuilds (live-rebuild/company-rebuild.ts) through the live generation's writer, one at a
 * time: `start` runs one to its end, `request` is the admin port's (202, or 400/409 and why), `list`
 * what /rebuild and /readyz report.
 */
export function createCompanyRebuilds(
  config: CompanyRebuildConfig,
  deps: {
    readonly logger: Logger;
    readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  },
  avro: AvroSupport,
  live: () => LiveGeneration | undefined,
) {
  const { logger } = deps;
  const rebuilds: RebuildStatus[] = [];

  /** Why a company rebuild cannot start now (admin port: 400 / 409), or undefined. */
  function refuse(companyId: string): { status: 400 | 409; error: string } | undefined {
    if (!isUuid(companyId)) {
      return { status: 400, error: `not a company id: ${JSON.stringify(String(companyId).slice(0, 64))}` };
    }
    // A split writer rebuilds only its own companies (another writer holds the others).
    const owned = config.ownership;
    if (owned && !owned.applied.includes(companyPartition(companyId, owned.partitions))) {
      return {
        status: 400,
        error: `company ${companyId} is not writer "${owned.writer}"'s: its partition ${companyPartition(companyId, owned.partitions)} is another writer's in ${owned.file}`,
      };
    }
    if (rebuilds.some((r) => r.status === 'running')) {
      return { status: 409, error: 'a company rebuild is already running' };
    }
    if (!live()) return { status: 409, error: 'ingest is not consuming yet; retry in a few seconds' };
    return undefined;
  }

  async function start(companyId: string): Promise<CompanyRebuildResult> {
    const refused = refuse(companyId);
    const generation = live();
    if (refused || !generation) throw new RangeError(refused?.error ?? 'ingest is not consuming');
    const status: RebuildStatus = { companyId, status: 'running', startedAt: new Date().toISOString() };
    rebuilds.push(status);
    try {
      status.result = await rebuildCompany(companyId, {
        config,
        logger,
        sink: generation.sink,
        avscTypes: deps.avscTypes as (table: string) => ReadonlyMap<string, ColumnType> | undefined,
        avro,
        groupId: generation.groupId,
        signal: generation.signal,
      });
      status.status = 'done';
      return status.result;
    } catch (error) {
      status.status = 'failed';
      status.error = error instanceof Error ? error.message : String(error);
      logger.error(
        { companyId, err: status.error },
        'company rebuild failed: the company stays out of service; run it again',
      );
      throw error;
    }
  }

  return {
    start,
    request(companyId: string): { status: number; error?: string } {
      const refused = refuse(companyId);
      if (refused) return refused;
      // Runs on; its outcome is in /rebuild and /readyz `rebuilds`, and logged.
      start(companyId).catch(() => {});
      return { status: 202 };
    },
    list: (): readonly RebuildStatus[] => rebuilds,
  };
}
export type CompanyRebuilds = ReturnType<typeof createCompanyRebuilds>;
