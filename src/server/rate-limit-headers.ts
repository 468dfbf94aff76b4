/**
 * Rate-limit headers on every response to a valid key, 429 included (docs/API.md, "Rate limits"):
 * X-RateLimit-Limit / -Remaining / -Reset for the hourly window, Retry-After on 429, and as
 * an addition the IETF draft RateLimit-Policy / RateLimit fields for both policies.
 */
import type { FastifyInstance } from 'fastify';
import { answerCountsNothing } from '../domain/rate-limit.js';
import type { Admission, LimitDecision } from '../services/limits/rate-limiter.js';

export function rateLimitHeaders(decision: LimitDecision, nowMs: number): Record<string, string> {
  const { hourly, monthly } = decision;
  const nowSeconds = Math.floor(nowMs / 1000);
  const hourlyReset = Math.max(0, hourly.resetAt - nowSeconds);
  const monthlyReset = Math.max(0, Math.ceil((monthly.resetsAt.getTime() - nowMs) / 1000));
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(hourly.limit),
    'x-ratelimit-remaining': String(hourly.remaining),
    'x-ratelimit-reset': String(hourly.resetAt),
    'ratelimit-policy': `"hourly";q=${hourly.limit};w=3600, "monthly";q=${monthly.limit}`,
    ratelimit: `"hourly";r=${hourly.remaining};t=${hourlyReset}, "monthly";r=${monthly.remaining};t=${monthlyReset}`,
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}

/**
 * The headers on every response with a decision, and the month invariant's HTTP side: a
 * request admitted and then answered 429 or 5xx (or a GraphQL refusal of that kind, sent as
 * 200) is handed to `release`, so it counts nothing. The answer's status is read when the
 * response has been sent in full ('finish'; hijacked responses, such as streams, included): an
 * answer that never reached the client stays counted.
 */
export function registerRateLimitHeaders(app: FastifyInstance, now: () => number, release: (admission: Admission) => void): void {
  app.decorateRequest('rateLimit', null);
  app.decorateRequest('refusedAfterAdmission', false);
  app.addHook('onRequest', (req, reply, done) => {
    reply.raw.once('finish', () => {
      const decision = req.rateLimit;
      if (decision?.allowed && decision.admission && (answerCountsNothing(reply.raw.statusCode) || req.refusedAfterAdmission)) release(decision.admission);
    });
    done();
  });
  // Callback style: runs on every response, most of which (anonymous, health, docs) have no
  // decision, and an async hook would cost each of them a promise and a microtask turn.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.rateLimit) reply.headers(rateLimitHeaders(req.rateLimit, now()));
    done(null, payload);
  });
}
