/**
 * Customer accounts and the dashboard's operations (docs/DASHBOARD.md).
 *
 * - Admin: accounts, createAccount, setAccountTier; createApiKey takes an optional accountId.
 * - Account scope (a signed-in dashboard session; only the dashboard adapter resolves one):
 *   me, myApiKeys, myApiKey, createMyApiKey, revokeMyApiKey. Keys expose their usage (read
 *   without counting) and their webhook subscriptions to their account and to the admin.
 * - API key: apiKeyUsage, the calling key's own usage (GET /api/v1/usage).
 */
import type { Tier } from '../../domain/api-key.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Principal } from '../../domain/principal.js';
import type { AccountRecord, ApiKeyRecord } from '../../domain/account-records.js';
import { KEY_USAGE, keyUsageOf, USAGE } from '../../domain/usage-shape.js';
import { assertAccount } from '../auth.js';
import { builder } from '../builder.js';
import { resourceObjectType } from '../resource-types.js';
import { ApiKeyRef, CreatedApiKeyRef } from './api-key.js';
import { TierEnum } from './pick.js';
import { WebhookSubscriptionRef } from './webhook.js';

/** A key's data is its account's and the admin's; anyone else is told it does not exist. */
function assertKeyVisible(principal: Principal, key: ApiKeyRecord): void {
  if (principal.kind === 'admin') return;
  if (principal.kind === 'account' && key.accountId === principal.accountId) return;
  throw new NotFoundError(`No API key with id ${key.id}.`);
}

export const AccountRef = builder.objectRef<AccountRecord>('Account').implement({
  description: 'A customer account: signs in to the dashboard and owns API keys, which carry its tier.',
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    tier: t.field({ type: TierEnum, resolve: (account) => account.tier }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    apiKeys: t.field({
      type: [ApiKeyRef],
      description: 'Newest first, revoked keys included.',
      resolve: (account, _args, context) => context.services.apiKeys.listForAccount(account.id),
    }),
  }),
});

/** ApiKeyUsage, CallerKeyUsage and their windows, as declared (src/domain/usage-shape.ts). */
const ApiKeyUsageRef = resourceObjectType(KEY_USAGE);
const CallerKeyUsageRef = resourceObjectType(USAGE);

builder.objectFields(ApiKeyRef, (t) => ({
  accountId: t.id({ nullable: true, description: 'The owning account; null for a free-standing key.', resolve: (key) => key.accountId ?? null }),
  usage: t.field({
    type: ApiKeyUsageRef,
    description: "The key's hourly window and monthly usage under its tier's limits. Reading it counts nothing.",
    resolve: async (key, _args, context) => {
      assertKeyVisible(context.principal, key);
      return keyUsageOf(await context.services.auth.usage(key.id, key.tier));
    },
  }),
  webhookSubscriptions: t.field({
    type: [WebhookSubscriptionRef],
    description: "The key's webhook subscriptions, oldest first.",
    resolve: (key, _args, context) => {
      assertKeyVisible(context.principal, key);
      return context.services.webhooks.list(key.id);
    },
  }),
}));

const CreateAccountInput = builder.inputType('CreateAccountInput', {
  fields: (t) => ({
    email: t.string({ required: true, description: 'Stored trimmed and lower-cased; unique.' }),
    password: t.string({ required: true, description: '12 to 256 characters; stored as a scrypt hash.' }),
    tier: t.field({ type: TierEnum, required: true }),
  }),
});

const CreateMyApiKeyInput = builder.inputType('CreateMyApiKeyInput', {
  fields: (t) => ({
    label: t.string({ description: 'To tell keys apart, e.g. "production"; 1 to 100 characters.' }),
  }),
});

builder.queryFields((t) => ({
  apiKeyUsage: t.field({
    type: CallerKeyUsageRef,
    description:
      "The calling API key's tier, hourly window and monthly usage; reading it counts nothing more than the request itself (GET /api/v1/usage counts it against that endpoint's own window only). The admin token is no key: not_found.",
    authScopes: { tier: 'starter' },
    resolve: async (_root, _args, context) => {
      const principal = context.principal;
      if (principal.kind !== 'apiKey') throw new NotFoundError("The admin token is not an API key and has no usage; read a key's usage with apiKeys { usage }.");
      return { tier: principal.tier, ...keyUsageOf(await context.services.auth.usage(principal.apiKeyId, principal.tier)) };
    },
  }),
  accounts: t.field({
    type: [AccountRef],
    description: 'Every customer account, newest first.',
    authScopes: { admin: true },
    resolve: (_root, _args, context) => context.services.accounts.list(),
  }),
  me: t.field({
    type: AccountRef,
    description: 'The signed-in account (dashboard session).',
    authScopes: { account: true },
    resolve: (_root, _args, context) => context.services.accounts.get(assertAccount(context.principal).accountId),
  }),
  myApiKeys: t.field({
    type: [ApiKeyRef],
    description: "The signed-in account's keys, newest first, revoked keys included.",
    authScopes: { account: true },
    resolve: async (_root, _args, context) => {
      const { accountId } = assertAccount(context.principal);
      // This instance's batched last_used_at writes first, so a key just used does not read "never".
      await context.services.auth.flushLastUsed();
      return context.services.apiKeys.listForAccount(accountId);
    },
  }),
  myApiKey: t.field({
    type: ApiKeyRef,
    description: "One of the signed-in account's keys; another account's key is not_found.",
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.apiKeys.getForAccount(assertAccount(context.principal).accountId, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createAccount: t.field({
    type: AccountRef,
    description: 'A customer account that can sign in at /dashboard/login (duplicate_email when the email is taken).',
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateAccountInput, required: true }) },
    resolve: (_root, { input }, context) => context.services.accounts.create({ email: input.email, password: input.password, tier: input.tier as Tier }),
  }),
  setAccountTier: t.field({
    type: AccountRef,
    description: "Changes the account's tier and every key of it; each instance applies it to the key's next request.",
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }), tier: t.arg({ type: TierEnum, required: true }) },
    resolve: (_root, args, context) => context.services.accounts.setTier(String(args.id), args.tier),
  }),
  createMyApiKey: t.field({
    type: CreatedApiKeyRef,
    description: "A key for the signed-in account, with the account's tier. The plaintext key is returned only here.",
    authScopes: { account: true },
    args: { input: t.arg({ type: CreateMyApiKeyInput, required: false }) },
    resolve: (_root, args, context) =>
      context.services.apiKeys.create({ accountId: assertAccount(context.principal).accountId, label: args.input?.label ?? null }),
  }),
  revokeMyApiKey: t.field({
    type: ApiKeyRef,
    description: "Revokes one of the signed-in account's keys; it answers 401 on every instance within 1 s.",
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.auth.revoke(String(args.id), { accountId: assertAccount(context.principal).accountId }),
  }),
}));
