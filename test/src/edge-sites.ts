/**
 * The statement that inserts `sites` sites of `company` with values the projection must carry
 * unchanged: TOAST-sized notes on two sites in three (empty on the third), numeric areas with cents,
 * coordinates with 6 decimals, timestamps with microseconds given in another zone. For inTransaction
 * of stack-env.ts; shared by the JSON and the Avro pipeline tests.
 */
export const edgeValueSites = (company: string, sites: number): [string, unknown[]] => [
  `INSERT INTO sites (company_id, name, notes, area, latitude, longitude, geocoded_at, created_at)
   SELECT $1, 'Lot ' || g, repeat('n', (g % 3) * 4000), (g * 1234.56) % 99999999.99, -45.123456 + g * 0.000001,
          -73.985656, '2026-01-31 12:00:00.123456+05:00'::timestamptz + g * interval '1 second',
          '2025-12-31 23:59:59.999999+00'::timestamptz
   FROM generate_series(1, $2::int) AS g`,
  [company, sites],
];
