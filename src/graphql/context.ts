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
