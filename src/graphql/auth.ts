/**
 * Who may do what, as the schema's auth scopes (./builder.ts) ask it, in resolvers and in the
 * argument guard's access checks before execution: each throws the precise AppError (401 invalid_api_key, 403 tier_upgrade_required
 * / admin_required, 401 session_required), so every surface reports the same code.
 */
import { tierAtLeast, type Tier } from '../domain/api-key.js';
import { AdminRequiredError, InvalidApiKeyError, SessionRequiredError, TierUpgradeRequiredError } from '../domain/errors.js';
import { getOperationAST, Kind, type DocumentNode } from 'graphql';
import type { Principal } from './context.js';
import { STREAM_FRAME_SUBSCRIPTIONS } from './stream-frame.js';

/**
 * Throws the precise error for a principal below the minimum tier (admin passes). A stream
 * token carries its key's current tier; it reaches only the stream endpoints, and there only
 * the pickPublished subscription (assertStreamTokenOperation).
 */
function assertTier(principal: Principal, minimum: Tier): void {
  if (principal.kind === 'admin') return;
  if (principal.kind !== 'apiKey' && principal.kind !== 'streamToken') throw new InvalidApiKeyError();
  if (!tierAtLeast(principal.tier, minimum)) throw new TierUpgradeRequiredError(minimum);
}

export function assertAdmin(principal: Principal): void {
  if (principal.kind === 'admin') return;
  if (principal.kind === 'anonymous' || principal.kind === 'invalid') throw new InvalidApiKeyError();
  throw new AdminRequiredError();
}

/**
 * A stream token grants one operation: the pickPublished subscription, alone in its document's
 * operation. Anything else it sends (a query over graphql-sse, another subscription) is 401, as
 * a token is everywhere but the stream.
 */
export function assertStreamTokenOperation(principal: Principal, document: DocumentNode, operationName: string | null | undefined): void {
  if (principal.kind !== 'streamToken') return;
  const operation = getOperationAST(document, operationName ?? undefined);
  const fields = operation?.selectionSet.selections ?? [];
  const onlyFrame = fields.length > 0 && fields.every((field) => field.kind === Kind.FIELD && STREAM_FRAME_SUBSCRIPTIONS.includes(field.name.value));
  if (operation?.operation !== 'subscription' || !onlyFrame) {
    throw new InvalidApiKeyError(`A stream token reads the ${STREAM_FRAME_SUBSCRIPTIONS.join(', ')} subscriptions only; send the API key for anything else.`);
  }
}

/** The dashboard's scope: a signed-in account (session cookie, dashboard adapter only). */
export function assertAccount(principal: Principal): Extract<Principal, { kind: 'account' }> {
  if (principal.kind !== 'account') throw new SessionRequiredError();
  return principal;
}

/** The schema's auth scopes and their parameters (./builder.ts). */
export interface Scopes {
  admin: boolean;
  tier: Tier;
  account: boolean;
}

/** Each scope's check: the one place a scope name meets the assertion that decides it. */
export const SCOPE_CHECKS: { [S in keyof Scopes]: (principal: Principal, parameter: Scopes[S]) => void } = {
  admin: (principal) => assertAdmin(principal),
  tier: (principal, minimum) => assertTier(principal, minimum),
  account: (principal) => void assertAccount(principal),
};

/** The scopes of a field: it passes when any one of them does, as Pothos checks them. */
export type ScopeMap = Partial<Scopes>;

/** Throws what the scope-auth plugin would when `principal` passes none of `scopes`. */
export function assertScopes(principal: Principal, scopes: ScopeMap): void {
  let refusal: unknown = null;
  for (const scope of Object.keys(SCOPE_CHECKS) as (keyof Scopes)[]) {
    const parameter = scopes[scope];
    if (parameter === undefined || parameter === false) continue;
    try {
      (SCOPE_CHECKS[scope] as (principal: Principal, parameter: unknown) => void)(principal, parameter);
      return;
    } catch (error) {
      refusal ??= error;
    }
  }
  if (refusal !== null) throw refusal;
}
