import type { OwnershipWriter } from '@pda/projections/model';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.ts';
import { sendProblem } from '../errors/send-problem.ts';
import type { ForwardOutcome } from '../observability/metrics.ts';
import {
  HOP_CLIENT_HEADER,
  HOP_FROM_HEADER,
  HOP_HEADERS,
  HOP_REQUEST_ID_HEADER,
  HOP_SECRET_HEADER,
} from './hop.ts';
import type { HopDispatcher } from './hop-dispatcher.ts';

/**
 * The one hop of a request to the writer that serves its company (plugins/forward.ts decides when):
 * @fastify/reply-from over undici, same method, path and query, the partner's headers less the
 * hop-by-hop ones plus the hop headers (hop.ts); the owner's answer streams back unchanged. An
 * owner that cannot be reached answers 503 with Retry-After; a partner that leaves aborts the hop.
 */

/**
 * Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1; reply-from drops Connection,
 * Transfer-Encoding, Host and the names Connection lists itself), and our own hop headers, which
 * are set again below (a partner's copies must never travel under our secret).
 */
const REQUEST_HOP_BY_HOP = [
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
];

/** Response headers of the owner's connection, not of its answer: this node's connection has its own. */
const RESPONSE_HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'trailer',
  'upgrade',
];

const OWNER_UNREACHABLE =
  'The node that holds this company cannot be reached right now; retry after the number of seconds in Retry-After.';

export interface SendToOwnerDeps {
  /** Sent as the hop secret (the secret file's first line). */
  readonly secret: string;
  /** This node's writer name (the hop's `from`). */
  readonly self: string;
  readonly timeoutMs: number;
  readonly retryAfter: Readonly<Record<string, string>>;
  readonly hops: HopDispatcher;
  readonly recordForward: (outcome: ForwardOutcome) => void;
  /** Gives the request's rate-limit budget back (a 304 of the owner). */
  readonly refundRateLimit: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/** Forwards `request` to `owner`, its long poll allowed `waitMs` more; answers `reply` either way. */
export type SendToOwner = (
  request: FastifyRequest,
  reply: FastifyReply,
  owner: OwnershipWriter,
  waitMs: number,
) => FastifyReply;

export function ownerForwarder({
  secret,
  self,
  timeoutMs,
  retryAfter,
  hops,
  recordForward,
  refundRateLimit,
}: SendToOwnerDeps): SendToOwner {
  return function sendToOwner(request, reply, owner, waitMs) {
    const client = request.ip;
    const peer = request.socket.remoteAddress;
    // Every later line of this request (reply-from's failure warning, the completion line) names the owner.
    const log = request.log.child({ forwarded_to: owner.name });
    request.log = log;
    reply.log = log;
    const gone = new AbortController();
    const forget = hops.track(String(request.id), gone.signal);
    reply.raw.once('close', () => {
      forget();
      if (reply.raw.writableFinished) return;
      // reply-from logs every failed hop as a warning ('response errored'): a partner that went
      // away is no failure of the hop (pda_api_forwarded_total{outcome="partner_gone"} counts it).
      request.log = log.child({}, { level: 'error' });
      gone.abort();
    });
    try {
      reply.from(`${owner.api}${request.raw.url ?? request.url}`, {
        timeout: timeoutMs + waitMs,
        // reply-from retries a GET answered 503 (up to 10 times, after its Retry-After) by default:
        // the owner's 503s (rebuilding, overloaded) are the partner's to see, at once. The one
        // retry: a kept-alive connection the owner had closed (a restart, its idle timeout) fails
        // before any answer; every operation here is a GET, so it is sent once more at once.
        retryDelay: ({ err, attempt }) => (attempt === 0 && isClosedConnection(err) ? 1 : null),
        rewriteRequestHeaders: (_request, headers) => {
          const out = { ...headers };
          for (const name of REQUEST_HOP_BY_HOP) delete out[name];
          for (const name of HOP_HEADERS) delete out[name];
          out[HOP_SECRET_HEADER] = secret;
          out[HOP_FROM_HEADER] = self;
          out[HOP_CLIENT_HEADER] = client;
          out[HOP_REQUEST_ID_HEADER] = String(request.id);
          // The usual chain, for an owner that lists this node in API_TRUST_PROXY.
          const chain = out['x-forwarded-for'];
          if (peer !== undefined)
            out['x-forwarded-for'] = typeof chain === 'string' && chain !== '' ? `${chain}, ${peer}` : peer;
          return out;
        },
        rewriteHeaders: (headers) => {
          // Set here before the hop; the owner's answer says (or omits) it for its own files.
          reply.removeHeader('data-current-as-of');
          const out = { ...headers };
          for (const name of RESPONSE_HOP_BY_HOP) delete out[name];
          return out;
        },
        onResponse: (_request, _reply, res) => {
          recordForward('served_by_owner');
          // The budget was spent here, not on the owner: a 304 gives it back here.
          if (reply.statusCode === 304) {
            void refundRateLimit(request, reply).then(() => reply.send(res.stream));
          } else {
            reply.send(res.stream);
          }
        },
        onError: () => {
          // Nobody to answer: the connection is closed (as when the owner answers after it closed,
          // which reply-from drops).
          if (gone.signal.aborted) {
            recordForward('partner_gone');
            return;
          }
          // reply-from has logged the failure (one warning, 'response errored', with the owner's
          // name from the child logger above and the network error: never a header).
          recordForward('owner_unreachable');
          sendProblem(
            request,
            reply,
            new ApiError('service_unavailable', OWNER_UNREACHABLE, { headers: retryAfter }),
          );
        },
      });
    } catch (error) {
      // reply-from refuses a path with a '..' segment before sending anything: the owner would
      // refuse it too (no contract path or id holds one).
      request.log.info({ err: error }, 'request path not forwardable');
      return sendProblem(request, reply, new ApiError('bad_request', 'The request path is not valid.'));
    }
    return reply;
  };
}

/** A connection that broke before the owner answered: undici's socket error, or a reset. */
function isClosedConnection(error: Error | undefined): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}
