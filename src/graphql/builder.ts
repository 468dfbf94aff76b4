import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { tierAtLeast, type Tier } from '../domain/api-key.js';
import { AdminRequiredError, InvalidApiKeyError, TierUpgradeRequiredError } from '../domain/errors.js';
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

/**
 * The schema builder: plugins and the Context type only. Scopes throw the precise
 * AppError (401 invalid_api_key, 403 tier_upgrade_required / admin_required) so every
 * surface reports the same code.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  AuthScopes: { admin: boolean; tier: Tier };
  Scalars: { DateTime: { Input: string; Output: Date } };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin],
  defaultFieldNullability: false,
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
    }),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
