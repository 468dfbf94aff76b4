import SchemaBuilder from '@pothos/core';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { tierAtLeast, type Tier } from '../domain/api-key.js';
import { AdminRequiredError, InvalidApiKeyError, TierUpgradeRequiredError } from '../domain/errors.js';
import type { Context } from './context.js';

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
    authScopes: (context) => ({
      admin: () => {
        if (context.principal.kind === 'admin') return true;
        if (context.principal.kind === 'anonymous' || context.principal.kind === 'invalid') throw new InvalidApiKeyError();
        throw new AdminRequiredError();
      },
      tier: (minimum: Tier) => {
        const { principal } = context;
        if (principal.kind === 'admin') return true;
        if (principal.kind !== 'apiKey') throw new InvalidApiKeyError();
        if (!tierAtLeast(principal.tier, minimum)) throw new TierUpgradeRequiredError(minimum);
        return true;
      },
    }),
  },
});

builder.queryType({});
builder.mutationType({});
