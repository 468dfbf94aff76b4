import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../domain/principal.js';
import type { Services } from '../services/index.js';
import type { LimitDecision } from '../services/limits/rate-limiter.js';

export type { Principal };

export interface Context {
  principal: Principal;
  services: Services;
  requestId: string;
  /** The limiter's decision for this request (API keys only). */
  limits: LimitDecision | null;
}

/** What an HTTP surface hands to yoga with each request (the server context). */
export interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
  /** Set by anonymous adapters: credentials in the request are not looked at. */
  anonymous?: boolean;
  /**
   * Set by the dashboard adapter only: the principal is the account signed in with this
   * session cookie's token (never the Authorization header). No other surface sets it, so
   * cookies never authenticate /graphql or /api/v1 (docs/DASHBOARD.md).
   */
  dashboard?: { sessionToken: string | undefined };
  /**
   * Set by GET /api/v1/usage only: an API key is counted against that endpoint's own window
   * instead of its hourly limit and monthly cap (docs/RATE_LIMITING.md).
   */
  usageEndpoint?: boolean;
  /** Set by the stream endpoints: stream tokens are credentials there (BuildContextOptions.streamEndpoint). */
  streamEndpoint?: { accessToken?: string };
  /** Set by the /api/v1 routes: the customer API, where the admin token is not a credential (BuildContextOptions.customerApi). */
  customerApi?: boolean;
}
