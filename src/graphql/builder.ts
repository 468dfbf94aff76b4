import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { tierAtLeast, type Tier } from '../domain/api-key.js';
import { AdminRequiredError, InvalidApiKeyError, SessionRequiredError, TierUpgradeRequiredError } from '../domain/errors.js';
import type { Context, Principal } from './context.js';

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

/**
 * The schema builder: plugins and the Context type only. Scopes throw the precise
 * AppError (401 invalid_api_key, 403 tier_upgrade_required / admin_required) so every
 * surface reports the same code.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: { admin: boolean; tier: Tier; account: boolean };
  Scalars: { DateTime: { Input: string; Output: Date } };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  // Each field's cost (1 unless its `complexity` option says otherwise; lists x their page
  // size). The limit is checked before execution with the request's variables
  // (src/graphql/limits.ts, queryCost), not in resolvers: so disabled here.
  complexity: { defaultComplexity: 1, defaultListMultiplier: 10, disabled: true },
  scopeAuth: {
    // Refuse a subscription when it starts, not at its first event.
    authorizeOnSubscribe: true,
    authScopes: (context) => ({
      admin: () => {
        assertAdmin(context.principal);
        return true;
      },
      tier: (minimum: Tier) => {
        assertTier(context.principal, minimum);
        return true;
      },
      account: () => {
        assertAccount(context.principal);
        return true;
      },
    }),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
