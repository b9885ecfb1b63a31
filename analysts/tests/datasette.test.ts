import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '@pda/projections/testing';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedProjection } from '../src/testing/seed-projection.ts';

// The browser view (docs/analysts.md, "In the browser"): the one documented command,
// scripts/datasette.sh, takes a snapshot of every company and serves it with the dictionary as
// Datasette's metadata; a real headless Chromium (Debian package `chromium`, installed by
// scripts/test.sh) loads a table page with its facets, and the test reads what the page shows.
// The screenshot is kept in .data/test-artifacts/ (gitignored).

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const artifacts = join(repoRoot, '.data/test-artifacts');
const STARTUP_MS = 240_000;

let root: string;
let snapshotDir: string;
let server: ChildProcess | undefined;
let base: string;
let serverLog = '';

function chromium(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--hide-scrollbars',
        ...args,
      ],
      { timeout: 60_000, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new Error('chromium not found: apt-get install chromium (scripts/test.sh does)'));
        } else if (error) {
          reject(new Error(`chromium ${args.join(' ')} failed: ${stderr.slice(-2000)}`));
        } else {
          resolve(stdout);
        }
      },
    );
  });
}

/** The page's visible text, tags dropped and whitespace collapsed. */
function textOf(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

async function waitForServer(url: string): Promise<void> {
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline) {
    if (server?.exitCode !== null) throw new Error(`scripts/datasette.sh exited:\n${serverLog.slice(-3000)}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(
    `Datasette did not answer ${url} within ${STARTUP_MS / 1000} s:\n${serverLog.slice(-3000)}`,
  );
}

function snapshotRows(sql: string): Record<string, unknown>[] {
  const db = new Database(join(snapshotDir, 'analysis.sqlite'), { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-datasette-'));
  snapshotDir = join(root, 'snapshot');
  const dataDir = join(root, 'data');
  seedProjection(dataDir);
  await chromium(['--version']); // fails first, and clearly, when chromium is not installed
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Its own process group, so the cleanup reaches Datasette (exec'd by the script) by this pid.
  server = spawn(
    'bash',
    [
      join(repoRoot, 'scripts/datasette.sh'),
      '--data-dir',
      dataDir,
      '--port',
      String(port),
      '--snapshot-dir',
      snapshotDir,
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout?.on('data', (chunk: Buffer) => {
    serverLog += chunk.toString();
  });
  server.stderr?.on('data', (chunk: Buffer) => {
    serverLog += chunk.toString();
  });
  await waitForServer(`${base}/-/versions.json`);
}, STARTUP_MS + 30_000);

afterAll(() => {
  if (server?.pid !== undefined && server.exitCode === null) process.kill(-server.pid, 'SIGTERM');
  rmSync(root, { recursive: true, force: true });
});

describe('Datasette on a snapshot, in headless Chromium', () => {
  it('the sites page shows the row count, the dictionary description and the city facet', async () => {
    const url = `${base}/analysis/sites`; // its facets (city, country, company_id) come from the metadata
    const text = textOf(await chromium(['--dump-dom', url]));
    expect(text).toContain('analysis: sites: 360 rows');
    expect(text).toContain('Serviced sites (the places where the company works), exported as /v1/sites.');
    expect(text).toContain('city city or town'); // the column's description from the migration comment
    expect(text).toContain('serviced area, NULL when unknown [m²]');
    // The facets, with the counts SQLite gives for the same snapshot.
    const cities = snapshotRows('SELECT city, count(*) AS n FROM sites GROUP BY city ORDER BY n DESC, city');
    expect(text).toContain(`city ${cities.length} ${cities.map((row) => `${row.city} ${row.n}`).join(' ')}`);
    // company_id is shown by the company's name (the relation declared in the analysis database).
    const companies = snapshotRows('SELECT name FROM companies ORDER BY name');
    for (const { name } of companies) expect(text).toContain(`${name} 120`);

    mkdirSync(artifacts, { recursive: true });
    const screenshot = join(artifacts, 'datasette-sites.png');
    await chromium([`--screenshot=${screenshot}`, '--window-size=1400,2400', url]);
    expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
  });

  it('the equipment categories page facets by group_name', async () => {
    const text = textOf(await chromium(['--dump-dom', `${base}/analysis/equipment_categories`]));
    const groups = snapshotRows(
      'SELECT group_name, count(*) AS n FROM equipment_categories GROUP BY group_name ORDER BY n DESC, group_name',
    );
    const total = groups.reduce((sum, row) => sum + Number(row.n), 0);
    expect(text).toContain(`analysis: equipment_categories: ${total} rows`);
    expect(text).toContain(
      `group_name ${groups.length} ${groups.map((row) => `${row.group_name} ${row.n}`).join(' ')}`,
    );
  });
});
