/**
 * The demo account (embedded demo mode only): a customer account to sign in to /dashboard with
 * at once, Enterprise so every page has something to show. Created on the first start; a
 * password file generated again (removed or unreadable) gives the existing account that password,
 * so what the banner prints always signs in.
 *
 * It owns the demo key of its own tier (the Enterprise one), given at every start, so the
 * dashboard shows that key with its usage and webhooks, and a data directory whose account was
 * made before keys were given is fixed by the next start. The other demo keys stay free-standing:
 * an account's keys carry the account's tier (docs/DASHBOARD.md, "Accounts").
 */
import type { DemoAccount, DemoKeys } from '../embedded.js';
import type { Services } from '../services/index.js';
import type { AttachOutcome } from '../services/api-keys.js';

export async function ensureDemoAccount(services: Services, account: DemoAccount & { generated: boolean }): Promise<'created' | 'existing' | 'password_set'> {
  const existing = await services.accounts.findByEmail(account.email);
  if (!existing) {
    await services.accounts.create({ email: account.email, password: account.password, tier: 'enterprise' });
    return 'created';
  }
  if (!account.generated) return 'existing';
  await services.accounts.setPassword(existing.id, account.password);
  return 'password_set';
}

/**
 * Gives the demo account the demo keys of its tier (idempotent). Answers, per demo key's tier
 * (the keys of demo-keys.json), what happened: 'attached' or 'owned' for the keys it now owns,
 * the reason otherwise ('other_tier' for the keys of the other tiers).
 */
export async function attachDemoKeys(services: Services, email: string, keys: DemoKeys): Promise<Record<string, AttachOutcome>> {
  const account = await services.accounts.findByEmail(email);
  if (!account) return {};
  const outcomes: Record<string, AttachOutcome> = {};
  for (const [tier, key] of Object.entries(keys)) {
    // Only the account's own tier can be given; the others are not even looked up.
    outcomes[tier] = tier === account.tier ? await services.apiKeys.attachToAccount(account.id, key) : 'other_tier';
  }
  return outcomes;
}

/** The tiers of the demo keys the demo account owns, from attachDemoKeys' answer. */
export function ownedDemoKeyTiers(outcomes: Record<string, AttachOutcome>): string[] {
  return Object.entries(outcomes)
    .filter(([, outcome]) => outcome === 'attached' || outcome === 'owned')
    .map(([tier]) => tier);
}

/** The demo keys without those attachDemoKeys found revoked or unknown: the banner offers none of them. */
export function offeredDemoKeys(keys: DemoKeys, outcomes: Record<string, AttachOutcome>): DemoKeys {
  return Object.fromEntries(Object.entries(keys).filter(([tier]) => outcomes[tier] !== 'revoked' && outcomes[tier] !== 'unknown_key')) as DemoKeys;
}
