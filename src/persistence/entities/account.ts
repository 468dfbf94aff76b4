import { defineEntity, p } from '@mikro-orm/core';
import type { Tier } from '../../domain/api-key.js';

/** A customer account: signs in to the dashboard, owns API keys that carry its tier. */
export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.uuid().primary(),
    /** Normalised (trimmed, lower case). */
    email: p.text().unique('accounts_email_key'),
    /** scrypt, see src/domain/password.ts. */
    passwordHash: p.text(),
    tier: p.text().$type<Tier>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  checks: [
    { name: 'accounts_email_check', expression: 'email = lower(email) and length(email) >= 3 and length(email) <= 254' },
    { name: 'accounts_tier_check', expression: "tier in ('starter', 'growth', 'enterprise')" },
  ],
});

export class AccountEntity extends AccountSchema.class {}
AccountSchema.setClass(AccountEntity);

/** A signed-in dashboard session; the cookie holds the token, the row only its SHA-256. */
export const DashboardSessionSchema = defineEntity({
  name: 'DashboardSession',
  tableName: 'dashboard_sessions',
  properties: {
    id: p.uuid().primary(),
    tokenHash: p.text().unique('dashboard_sessions_token_hash_key'),
    accountId: p.uuid(),
    createdAt: p.datetime(),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime(),
  },
  indexes: [
    { name: 'dashboard_sessions_account_idx', properties: ['accountId'] },
    { name: 'dashboard_sessions_expires_idx', properties: ['expiresAt'] },
  ],
  checks: [{ name: 'dashboard_sessions_token_hash_check', expression: "token_hash ~ '^[0-9a-f]{64}$'" }],
});

export class DashboardSessionEntity extends DashboardSessionSchema.class {}
DashboardSessionSchema.setClass(DashboardSessionEntity);
