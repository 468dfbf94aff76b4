import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { Tier } from '../domain/api-key.js';
import { SCOPE_CHECKS, type Scopes } from './auth.js';
import type { Context } from './context.js';

/**
 * The schema builder: plugins and the Context type only. Scopes (./auth.ts) throw the precise
 * AppError (401 invalid_api_key, 403 tier_upgrade_required / admin_required) so every
 * surface reports the same code.
 */
interface BuilderConfig {
  Context: Context;
  AuthScopes: Scopes;
  Scalars: { DateTime: { Input: string; Output: Date } };
  DefaultFieldNullability: false;
}

/** The builder's schema types, for helpers that build fields outside one `fields` callback. */
export type Types = PothosSchemaTypes.ExtendDefaultTypes<BuilderConfig>;

export const builder = new SchemaBuilder<BuilderConfig>({
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
        SCOPE_CHECKS.admin(context.principal, true);
        return true;
      },
      tier: (minimum: Tier) => {
        SCOPE_CHECKS.tier(context.principal, minimum);
        return true;
      },
      account: () => {
        SCOPE_CHECKS.account(context.principal, true);
        return true;
      },
    }),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
