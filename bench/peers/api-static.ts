/**
 * Peer server of the api benchmark: the bytes of an api response (a file, read once) served by a
 * bare node http server for any GET — the ceiling of node's http stack on this machine.
 * Environment: PEER_PORT, PEER_FILE. Prints "ready" when listening.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.PEER_FILE ?? '');
const server = createServer((_request, response) => {
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
});
server.listen(Number(process.env.PEER_PORT ?? 0), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close());
