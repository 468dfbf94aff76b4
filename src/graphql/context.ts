import type { Principal } from '../domain/principal.js';
import type { Services } from '../services/index.js';

export type { Principal };

export interface Context {
  principal: Principal;
  services: Services;
  requestId: string;
}
