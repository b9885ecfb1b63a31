/**
 * Peer server of the api benchmark: a page of sites answered straight from PostgreSQL with OFFSET
 * paging (what a naive read API does), over a pg pool, as a bare node http server.
 *   GET /sites?offset=N&limit=50 → {"data":[...rows...]}
 * Environment: PDA_PG_* (the stack's), PEER_PORT, PEER_COMPANY_ID. Prints "ready" when listening.
 */
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({
  host: process.env.PDA_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.PDA_PG_PORT ?? 55432),
  database: process.env.PDA_PG_DATABASE ?? 'pda',
  user: process.env.PDA_PG_USER ?? 'pda',
  password: process.env.PDA_PG_PASSWORD ?? 'pda',
  max: 8,
});
const companyId = process.env.PEER_COMPANY_ID ?? '';
const QUERY = {
  name: 'page',
  text: 'SELECT * FROM bench_api.sites WHERE company_id = $1 ORDER BY id OFFSET $2 LIMIT $3',
};

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://peer');
  const offset = Number(url.searchParams.get('offset') ?? 0);
  const limit = Number(url.searchParams.get('limit') ?? 50);
  pool.query({ ...QUERY, values: [companyId, offset, limit] }).then(
    (result) => {
      const body = JSON.stringify({ data: result.rows });
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    },
    (error: unknown) => {
      response.writeHead(500).end(String(error));
    },
  );
});
server.listen(Number(process.env.PEER_PORT ?? 0), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
});
