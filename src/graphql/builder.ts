import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { Tier } from '../domain/api-key.js';
import { assertAccount, assertAdmin, assertTier } from './auth.js';
import type { Context } from './context.js';

/**
 * The schema builder: plugins and the Context type only. Scopes (./auth.ts) throw the precise
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
