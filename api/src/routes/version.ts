import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { contractRoute } from '../routing/contract-route.ts';

/**
 * GET /v1/version: the build stamp written by api/scripts/stamp-version.sh into the build-info
 * file (API_BUILD_INFO_FILE). Read once at start-up; a missing or unreadable file (a build made
 * outside the deploy script) gives nulls, which the contract calls a valid answer
 * (docs/public-data-api-v1.md, "Version stamp").
 */

interface VersionStamp {
  commit_hash: string | null;
  branch: string | null;
  tag: string | null;
  deployed_at: string | null;
}

export function readBuildInfo(file: string): VersionStamp {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      raw = parsed as Record<string, unknown>;
  } catch {
    // absent or not JSON: every member null
  }
  const text = (value: unknown, max: number, pattern?: RegExp): string | null =>
    typeof value === 'string' && value.length > 0 && value.length <= max && (!pattern || pattern.test(value))
      ? value
      : null;
  return {
    commit_hash: text(raw.commit_hash, 64, /^[0-9a-f]+$/),
    branch: text(raw.branch, 255),
    tag: text(raw.tag, 255),
    deployed_at: text(raw.deployed_at, 100),
  };
}

export default async function versionRoutes(app: FastifyInstance): Promise<void> {
  const stamp = readBuildInfo(app.config.buildInfoFile);
  app.route(contractRoute(app, 'getVersion', async () => stamp));
}
