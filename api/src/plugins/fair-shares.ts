import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors/api-error.ts';
import { sendProblem } from '../errors/send-problem.ts';
import type { RefusalReason } from '../observability/metrics.ts';
import { FairShares, type Share, type ShareRefusal } from '../rate-limit/fair-shares.ts';
import { KeyTurns } from '../rate-limit/key-turns.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's fair shares (rate-limit/fair-shares.ts). */
    fairShares: {
      /**
       * Moves the request from the in-progress count of its key to the key's held share, for a
       * change-feed request about to wait (changes/changes-handler.ts; a forwarded one on the
       * node the partner reached: plugins/forward.ts). Throws the 429 beyond the share. The share
       * is the request's until released, at the latest when its answer is sent or its connection
       * closes.
       */
      hold(request: FastifyRequest): Share;
      /** The same for a change-feed stream (changes/stream-response.ts): the key's share of streams. */
      stream(request: FastifyRequest): Share;
      /** What a key has counted now (tests). */
      counts(keyId: string): { inProgress: number; held: number; streams: number };
    };
  }
  interface FastifyRequest {
    /** The fair share this request holds now (in progress or held); null: none. */
    share: Share | null;
    /** Why this request was refused to protect the service, when a hook or handler said so (metrics). */
    refusal: RefusalReason | null;
  }
}

/** Seconds a key over its share is asked to wait: a request in progress ends in milliseconds. */
const RETRY_AFTER_S = 1;

const DETAIL: Record<ShareRefusal, (max: number) => string> = {
  in_progress_per_key: (max) =>
    `This API key has ${max} requests in progress, the most it may; retry in ${RETRY_AFTER_S} s.`,
  in_progress_per_company: (max) =>
    `The keys of this company have ${max} requests in progress, the most they may; retry in ${RETRY_AFTER_S} s.`,
  held_per_key: (max) =>
    `This API key has ${max} change-feed requests waiting (wait), the most it may; retry in ${RETRY_AFTER_S} s.`,
  streams_per_key: (max) =>
    `This API key has ${max} change-feed streams open, the most it may; retry once one has ended.`,
};

/**
 * Fair shares between keys and companies (api/README.md, "Fair shares"): an authenticated request
 * is in progress from the end of authentication (this preValidation hook runs after pda-auth's)
 * until its answer is sent or its connection closes, whichever comes first; beyond its key's or
 * its company's share it is answered 429 too_many_requests_in_progress with Retry-After, sent by
 * the hook itself (no log line per refusal, as plugins/connection-limits.ts). The hook runs before
 * pda-forward's (which depends on this plugin): a request for another writer's company is counted
 * here, where it arrived, and a trusted hop is not counted again on the owner (as for the rate
 * limit). Held change-feed requests are counted per key by `hold`, on the node that holds them.
 * Then the request waits for its key's turn of the event loop (rate-limit/key-turns.ts).
 */
export default fp(
  async (app) => {
    const limits = app.config.fairShares;
    const shares = new FairShares(limits);
    const turns = limits.turns ? new KeyTurns() : undefined;
    app.decorateRequest('share', null);
    app.decorateRequest('refusal', null);

    const refusal = (request: FastifyRequest, reason: ShareRefusal): ApiError => {
      request.refusal = reason;
      const max = {
        in_progress_per_key: limits.perKey,
        in_progress_per_company: limits.perCompany,
        held_per_key: limits.heldPerKey,
        streams_per_key: limits.streamsPerKey,
      }[reason];
      return new ApiError('too_many_requests_in_progress', DETAIL[reason](max), {
        headers: { 'retry-after': String(RETRY_AFTER_S) },
      });
    };

    /** Moves the request out of the in-progress count into the share `take` gives it. */
    const moveTo = (request: FastifyRequest, take: (keyId: string) => Share | ShareRefusal): Share => {
      const tenant = request.tenant;
      if (tenant === null) throw new Error('fair shares: a held request is authenticated');
      const share = take(tenant.key.id);
      if (typeof share === 'string') throw refusal(request, share);
      request.share?.release();
      request.share = share;
      return share;
    };
    app.decorate('fairShares', {
      hold: (request: FastifyRequest) => moveTo(request, (keyId) => shares.hold(keyId)),
      stream: (request: FastifyRequest) => moveTo(request, (keyId) => shares.stream(keyId)),
      counts: (keyId: string) => shares.counts(keyId),
    });

    app.addHook('preValidation', async (request, reply) => {
      const tenant = request.tenant;
      if (tenant === null) return;
      // Whatever the request holds when it ends, in progress or held; release is once only.
      const end = () => request.share?.release();
      reply.raw.once('finish', end);
      reply.raw.once('close', end);
      // Its key's turn first (a hop waits on the owner too, where its page is read), and only
      // then counted in progress: a burst waiting for its turns is not refused, so a key's change
      // feed followers coming back together are held as before (bench/results/noisy-neighbour-2026-12-01.md,
      // "With turns": counted while waiting, 40 followers of one key got thousands of 429s).
      const turn = turns?.take(tenant.key.id);
      if (turn !== undefined) await turn;
      if (request.hop?.trusted === true) return;
      const entered = shares.enter(tenant.key.id, tenant.company.id);
      if (typeof entered === 'string') return sendProblem(request, reply, refusal(request, entered));
      request.share = entered;
    });
  },
  {
    name: 'pda-fair-shares',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-auth', 'pda-problems', 'pda-metrics'],
  },
);
