// A writer for end-to-end tests of the sync guarantee: random changes to one company's rows in
// PostgreSQL (dev-world/db/schema.sql) touching every exported table and every kind of column — text,
// large text (TOASTed, so updates of other columns arrive without it), exact decimals, nullable
// decimals and timestamps, integers, currency codes — plus inserts, deletes, contacts changed or
// moved to another site, categories changed or deleted (their equipment moved first), sites moved
// to another company with their contacts and back, and transactions that commit seconds late while
// the others go on. Errors a concurrent writer can meet (a deadlock, a row deleted by a late
// transaction) abandon that change only: the test compares with whatever PostgreSQL holds at the end.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

type Query = (sql: string, params: unknown[]) => Promise<pg.QueryResult>;

interface Scope {
  readonly company: string;
  /** The company sites move to and back from. */
  readonly other: string;
}

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!;
const chance = (p: number) => Math.random() < p;
const word = () => pick(['north', 'lot', 'plaza', 'depot', 'salt', 'yard', 'east', 'mall', 'ridge']);
const text = () => `${word()} ${word()} ${Math.floor(Math.random() * 10_000)}`;
const amount = () => (Math.random() * 500).toFixed(2);
const currency = () => pick(['USD', 'CAD', 'EUR']);
const minutes = () => Math.floor(Math.random() * 240);
const color = () => `#${randomBytes(3).toString('hex')}`;
const chargeType = () => pick(['hourly', 'per_visit', 'per_push', 'seasonal']);
/** A timestamp with microseconds, as PostgreSQL keeps them. */
const instant = () =>
  `2026-0${1 + Math.floor(Math.random() * 9)}-1${Math.floor(Math.random() * 9)}T0${Math.floor(Math.random() * 9)}:12:34.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}Z`;
/** ~6 KB of incompressible text: stored out of line, so other updates carry it as unavailable. */
const largeNotes = () => randomBytes(4_500).toString('base64');

/** A random row of the company's in `table` (other than `except`), or undefined when it has none. */
async function randomId(q: Query, table: string, company: string, except = ''): Promise<string | undefined> {
  const { rows } = await q(
    `SELECT id FROM ${table} WHERE company_id = $1 AND id::text <> $2 ORDER BY random() LIMIT 1`,
    [company, except],
  );
  return rows[0]?.id as string | undefined;
}

/** Updates `assignments` (column = $2, …) of a random row of `table`. */
async function updateRandom(q: Query, table: string, company: string, assignments: Record<string, unknown>) {
  const id = await randomId(q, table, company);
  if (id === undefined) return;
  const columns = Object.keys(assignments);
  await q(`UPDATE ${table} SET ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')} WHERE id = $1`, [
    id,
    ...Object.values(assignments),
  ]);
}

async function insertSite(q: Query, company: string): Promise<void> {
  const { rows } = await q(
    `INSERT INTO sites (company_id, name, name_for_operators, site_reference, notes, area, city, country,
       latitude, longitude, coordinates_accuracy, geocoded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
    [
      company,
      text(),
      text(),
      text(),
      chance(0.3) ? largeNotes() : text(),
      chance(0.2) ? null : amount(),
      word(),
      pick(['US', 'CA', 'FR']),
      (Math.random() * 180 - 90).toFixed(6),
      (Math.random() * 360 - 180).toFixed(6),
      chance(0.2) ? null : pick(['rooftop', 'street', 'postal_code', 'manual']),
      chance(0.2) ? null : instant(),
    ],
  );
  for (let i = Math.floor(Math.random() * 3); i > 0; i--) await insertContact(q, company, rows[0].id);
}

async function insertContact(q: Query, company: string, site?: string): Promise<void> {
  const siteId = site ?? (await randomId(q, 'sites', company));
  if (siteId === undefined) return;
  await q(
    `INSERT INTO site_contacts (company_id, site_id, name, role, email, phone, phone_type)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      company,
      siteId,
      text(),
      word(),
      `${word()}${Math.floor(Math.random() * 1e6)}@example.com`,
      '555-0100',
      'mobile',
    ],
  );
}

async function insertService(q: Query, company: string): Promise<void> {
  await q(
    `INSERT INTO services (company_id, name, color, client_charge_type, client_rate_amount, client_rate_currency,
       client_minimum_minutes, subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      company,
      text(),
      color(),
      chargeType(),
      amount(),
      currency(),
      minutes(),
      chargeType(),
      amount(),
      currency(),
    ],
  );
}

async function insertCategory(q: Query, company: string): Promise<void> {
  await q(
    `INSERT INTO equipment_categories (company_id, name, group_name, default_client_rate_amount,
       default_client_rate_currency, default_subcontractor_rate_amount, default_subcontractor_rate_currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [company, text(), pick(['vehicles', 'loaders', 'spreaders']), amount(), currency(), amount(), currency()],
  );
}

async function insertEquipment(q: Query, company: string): Promise<void> {
  const category = await randomId(q, 'equipment_categories', company);
  if (category === undefined) return;
  await q(
    'INSERT INTO equipment (company_id, category_id, name, client_description) VALUES ($1, $2, $3, $4)',
    [company, category, text(), text()],
  );
}

async function insertConsumable(q: Query, company: string): Promise<void> {
  await q(
    `INSERT INTO consumables (company_id, name, group_name, default_client_rate_amount, default_client_rate_currency,
       default_subcontractor_rate_amount, default_subcontractor_rate_currency)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [company, text(), pick(['de_icing', 'traction']), amount(), currency(), amount(), currency()],
  );
}

async function deleteRandom(q: Query, table: string, company: string): Promise<void> {
  const id = await randomId(q, table, company);
  if (id !== undefined) await q(`DELETE FROM ${table} WHERE id = $1`, [id]);
}

/**
 * A site and its contacts move to another company together, as the office would move them. A site
 * with large notes moves too: PostgreSQL sends its unchanged TOASTed notes as "unavailable", and the
 * gaining company's copy must still have them (projections/README.md, "Unavailable values").
 */
async function moveSite(q: Query, from: string, to: string): Promise<void> {
  const id = await randomId(q, 'sites', from);
  if (id === undefined) return;
  const moved = await q('UPDATE sites SET company_id = $2 WHERE id = $1 AND company_id = $3', [id, to, from]);
  if (moved.rowCount === 1) await q('UPDATE site_contacts SET company_id = $2 WHERE site_id = $1', [id, to]);
}

/** The operations and their weights; each runs on `q` (the pool, or a late transaction's client). */
const OPERATIONS: ReadonlyArray<readonly [string, number, (q: Query, s: Scope) => Promise<void>]> = [
  ['site: insert', 4, (q, s) => insertSite(q, s.company)],
  [
    'site: text fields',
    3,
    (q, s) => updateRandom(q, 'sites', s.company, { name: text(), client_reference: text() }),
  ],
  ['site: large notes', 1, (q, s) => updateRandom(q, 'sites', s.company, { notes: largeNotes() })],
  [
    'site: area (decimal or null)',
    2,
    (q, s) => updateRandom(q, 'sites', s.company, { area: chance(0.2) ? null : amount() }),
  ],
  [
    'site: address',
    2,
    (q, s) =>
      updateRandom(q, 'sites', s.company, {
        address_line1: text(),
        postal_code: word(),
        country: pick(['US', 'CA']),
      }),
  ],
  [
    'site: coordinates (decimals, timestamp, nulls)',
    2,
    (q, s) =>
      updateRandom(q, 'sites', s.company, {
        latitude: (Math.random() * 180 - 90).toFixed(6),
        longitude: chance(0.1) ? null : (Math.random() * 360 - 180).toFixed(6),
        coordinates_accuracy: chance(0.2) ? null : pick(['rooftop', 'street']),
        geocoded_at: chance(0.2) ? null : instant(),
      }),
  ],
  ['site: delete (with its contacts)', 2, (q, s) => deleteRandom(q, 'sites', s.company)],
  ['site: move to another company', 1, (q, s) => moveSite(q, s.company, s.other)],
  ['site: move back', 1, (q, s) => moveSite(q, s.other, s.company)],
  ['contact: insert', 2, (q, s) => insertContact(q, s.company)],
  [
    'contact: update',
    3,
    (q, s) =>
      updateRandom(q, 'site_contacts', s.company, {
        email: `${word()}@example.com`,
        phone_type: pick(['mobile', 'office', 'home']),
      }),
  ],
  [
    'contact: move to another site',
    1,
    async (q, s) => {
      const site = await randomId(q, 'sites', s.company);
      if (site !== undefined) await updateRandom(q, 'site_contacts', s.company, { site_id: site });
    },
  ],
  ['contact: delete', 2, (q, s) => deleteRandom(q, 'site_contacts', s.company)],
  ['service: insert', 2, (q, s) => insertService(q, s.company)],
  [
    'service: update (text, colour, integer)',
    2,
    (q, s) =>
      updateRandom(q, 'services', s.company, {
        name: text(),
        color: color(),
        client_minimum_minutes: minutes(),
      }),
  ],
  [
    'service: update rates (decimals, currency)',
    2,
    (q, s) =>
      updateRandom(q, 'services', s.company, {
        client_rate_amount: amount(),
        subcontractor_rate_amount: amount(),
        subcontractor_rate_currency: currency(),
        subcontractor_charge_type: chargeType(),
      }),
  ],
  ['service: delete', 1, (q, s) => deleteRandom(q, 'services', s.company)],
  ['category: insert', 1, (q, s) => insertCategory(q, s.company)],
  [
    'category: update (its equipment is exported again)',
    2,
    (q, s) =>
      updateRandom(q, 'equipment_categories', s.company, {
        name: text(),
        default_client_rate_amount: amount(),
      }),
  ],
  [
    'category: delete (its equipment moved first)',
    1,
    async (q, s) => {
      const id = await randomId(q, 'equipment_categories', s.company);
      const target = id && (await randomId(q, 'equipment_categories', s.company, id));
      if (!id || !target) return;
      await q('UPDATE equipment SET category_id = $2 WHERE category_id = $1', [id, target]);
      await q('DELETE FROM equipment_categories WHERE id = $1', [id]);
    },
  ],
  ['equipment: insert', 2, (q, s) => insertEquipment(q, s.company)],
  [
    'equipment: update',
    2,
    (q, s) => updateRandom(q, 'equipment', s.company, { name: text(), name_for_operators: text() }),
  ],
  [
    'equipment: change category',
    1,
    async (q, s) => {
      const category = await randomId(q, 'equipment_categories', s.company);
      if (category !== undefined) await updateRandom(q, 'equipment', s.company, { category_id: category });
    },
  ],
  ['equipment: delete', 1, (q, s) => deleteRandom(q, 'equipment', s.company)],
  ['consumable: insert', 1, (q, s) => insertConsumable(q, s.company)],
  [
    'consumable: update',
    2,
    (q, s) =>
      updateRandom(q, 'consumables', s.company, {
        group_name: pick(['de_icing', 'traction']),
        default_subcontractor_rate_amount: amount(),
      }),
  ],
  ['consumable: delete', 1, (q, s) => deleteRandom(q, 'consumables', s.company)],
];
const TOTAL_WEIGHT = OPERATIONS.reduce((sum, [, weight]) => sum + weight, 0);

function randomOperation() {
  let r = Math.random() * TOTAL_WEIGHT;
  for (const operation of OPERATIONS) {
    r -= operation[1];
    if (r < 0) return operation;
  }
  return OPERATIONS[0]!;
}

/** The company's first rows: `n` sites (with a contact each), services, categories, equipment, consumables. */
export async function seedCompany(pool: pg.Pool, company: string, n: number): Promise<void> {
  const q: Query = (sql, params) => pool.query(sql, params);
  for (let i = 0; i < n; i++) await insertSite(q, company);
  for (let i = 0; i < Math.ceil(n / 4); i++) {
    await insertService(q, company);
    await insertCategory(q, company);
    await insertConsumable(q, company);
  }
  for (let i = 0; i < n / 2; i++) await insertEquipment(q, company);
}

export interface WriterSummary {
  /** Changes committed, per operation. */
  readonly committed: Record<string, number>;
  readonly lateTransactions: number;
  /** Changes abandoned on a conflict with a concurrent transaction. */
  readonly abandoned: number;
}

/**
 * Random changes for `ms`, one every `pauseMs` or so; one in `lateEvery` is a transaction of a few
 * changes that commits 1.5 to 3 s later while the others go on.
 */
export async function writeRandomly(
  pool: pg.Pool,
  scope: Scope,
  { ms, pauseMs = 25, lateEvery = 20 }: { ms: number; pauseMs?: number; lateEvery?: number },
): Promise<WriterSummary> {
  const committed: Record<string, number> = {};
  let abandoned = 0;
  let lateTransactions = 0;
  const count = (names: string[]) => {
    for (const name of names) committed[name] = (committed[name] ?? 0) + 1;
  };
  const late = async () => {
    const client = await pool.connect();
    const q: Query = (sql, params) => client.query(sql, params);
    const names: string[] = [];
    try {
      await client.query('BEGIN');
      for (let i = 1 + Math.floor(Math.random() * 3); i > 0; i--) {
        const [name, , run] = randomOperation();
        await run(q, scope);
        names.push(`${name} (late)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_500 + Math.random() * 1_500));
      await client.query('COMMIT');
      count(names);
      lateTransactions += 1;
    } catch {
      await client.query('ROLLBACK').catch(() => undefined);
      abandoned += 1;
    } finally {
      client.release();
    }
  };

  const deadline = Date.now() + ms;
  const pending: Promise<void>[] = [];
  const q: Query = (sql, params) => pool.query(sql, params);
  for (let i = 1; Date.now() < deadline; i++) {
    // Caught at once: no connection for a late transaction (PostgreSQL restarting) is an abandoned
    // change, not a rejection left unhandled until the slice ends.
    if (i % lateEvery === 0)
      pending.push(
        late().catch(() => {
          abandoned += 1;
        }),
      );
    else {
      const [name, , run] = randomOperation();
      // A failed statement of a multi-statement operation leaves the earlier ones committed: fine,
      // PostgreSQL's final state is the reference.
      await run(q, scope).then(
        () => count([name]),
        () => {
          abandoned += 1;
        },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  await Promise.all(pending);
  return { committed, lateTransactions, abandoned };
}
