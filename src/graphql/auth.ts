/**
 * Who may do what, as the schema's auth scopes (./builder.ts) and the REST adapter's check
 * order ask it: each throws the precise AppError (401 invalid_api_key, 403 tier_upgrade_required
 * / admin_required, 401 session_required), so every surface reports the same code.
 */
import { tierAtLeast, type Tier } from '../domain/api-key.js';
import { AdminRequiredError, InvalidApiKeyError, SessionRequiredError, TierUpgradeRequiredError } from '../domain/errors.js';
import type { Principal } from './context.js';

/** Throws the precise error for a principal below the minimum tier (admin passes). */
export function assertTier(principal: Principal, minimum: Tier): void {
  if (principal.kind === 'admin') return;
  if (principal.kind !== 'apiKey') throw new InvalidApiKeyError();
  if (!tierAtLeast(principal.tier, minimum)) throw new TierUpgradeRequiredError(minimum);
}

export function assertAdmin(principal: Principal): void {
  if (principal.kind === 'admin') return;
  if (principal.kind === 'anonymous' || principal.kind === 'invalid') throw new InvalidApiKeyError();
  throw new AdminRequiredError();
}

/** The dashboard's scope: a signed-in account (session cookie, dashboard adapter only). */
export function assertAccount(principal: Principal): Extract<Principal, { kind: 'account' }> {
  if (principal.kind !== 'account') throw new SessionRequiredError();
  return principal;
}

/** The scopes of a field (./builder.ts): a field passes when any one of them does, as Pothos checks them. */
export type ScopeMap = Partial<{ admin: boolean; tier: Tier; account: boolean }>;

/** Throws what the scope-auth plugin would when `principal` passes none of `scopes`. */
export function assertScopes(principal: Principal, scopes: ScopeMap): void {
  let refusal: unknown = null;
  for (const scope of ['admin', 'tier', 'account'] as const) {
    const parameter = scopes[scope];
    if (parameter === undefined || parameter === false) continue;
    try {
      if (scope === 'tier') assertTier(principal, parameter as Tier);
      else if (scope === 'admin') assertAdmin(principal);
      else assertAccount(principal);
      return;
    } catch (error) {
      refusal ??= error;
    }
  }
  if (refusal !== null) throw refusal;
}
