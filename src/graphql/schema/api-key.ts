import { Repeater } from '@repeaterjs/repeater';
import type { ApiKeyRecord } from '../../domain/account-records.js';
import { builder } from '../builder.js';
import { TierEnum } from './pick.js';

export const ApiKeyRef = builder.objectRef<ApiKeyRecord>('ApiKey').implement({
  description: 'A customer API key. The secret itself is shown once, by createApiKey.',
  fields: (t) => ({
    id: t.exposeID('id'),
    tier: t.field({ type: TierEnum, resolve: (key) => key.tier }),
    label: t.exposeString('label', { nullable: true }),
    prefix: t.exposeString('displayPrefix', { description: 'The first characters of the key, to tell keys apart.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.field({ type: 'DateTime', nullable: true, resolve: (key) => key.revokedAt ?? null }),
    lastUsedAt: t.field({ type: 'DateTime', nullable: true, resolve: (key) => key.lastUsedAt ?? null }),
    active: t.boolean({ resolve: (key) => !key.revokedAt }),
  }),
});

export const CreatedApiKeyRef = builder.objectRef<{ key: string; apiKey: ApiKeyRecord }>('CreatedApiKey').implement({
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The plaintext key. It is not stored and cannot be shown again.' }),
    apiKey: t.field({ type: ApiKeyRef, resolve: (created) => created.apiKey }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    tier: t.field({ type: TierEnum, description: "Required for a free-standing key; with accountId it may be omitted (the account's tier)." }),
    label: t.string(),
    accountId: t.id({ description: "The owning account (docs/DASHBOARD.md); the key carries the account's tier." }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: [ApiKeyRef],
    authScopes: { admin: true },
    resolve: (_root, _args, context) => context.services.apiKeys.list(),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_root, { input }, context) => context.services.apiKeys.create(input),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    description: 'Takes effect on every instance within 1 s.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, context) => context.services.auth.revoke(String(args.id)),
  }),
}));

const ApiKeyAccessChangeRef = builder.objectRef<{ apiKeyId: string }>('ApiKeyAccessChange').implement({
  description: 'An API key was revoked or moved to another tier.',
  fields: (t) => ({
    apiKeyId: t.exposeID('apiKeyId'),
  }),
});

builder.subscriptionFields((t) => ({
  apiKeyAccessChanged: t.field({
    type: ApiKeyAccessChangeRef,
    description:
      'Keys revoked or moved to another tier, on any instance (a change may be reported more than once). The SSE picks stream ends such keys\' open streams with it. Admin only.',
    authScopes: { admin: true },
    subscribe: (_root, _args, context) =>
      // Up to 1,024 unread changes are held; a subscriber further behind is ended with an error.
      new Repeater<{ apiKeyId: string }>(async (push, stop) => {
        const stopListening = context.services.auth.onAccessChanged((apiKeyId) => {
          try {
            void push({ apiKeyId });
          } catch (overflow) {
            stop(overflow);
          }
        });
        await stop;
        stopListening();
      }),
    resolve: (change) => change,
  }),
}));
