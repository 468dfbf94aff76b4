import { defineEntity, p } from '@mikro-orm/core';
import type { Tier } from '../../domain/api-key.js';

/** A customer account: signs in to the dashboard, owns API keys that carry its tier. */
export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.uuid().primary(),
    /** Normalised (trimmed, lower case). */
    email: p.text().unique(),
    /** scrypt, see src/domain/password.ts. */
    passwordHash: p.text(),
    tier: p.text().$type<Tier>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class AccountEntity extends AccountSchema.class {}
AccountSchema.setClass(AccountEntity);

/** A signed-in dashboard session; the cookie holds the token, the row only its SHA-256. */
export const DashboardSessionSchema = defineEntity({
  name: 'DashboardSession',
  tableName: 'dashboard_sessions',
  properties: {
    id: p.uuid().primary(),
    tokenHash: p.text().unique(),
    accountId: p.uuid(),
    createdAt: p.datetime(),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime(),
  },
});

export class DashboardSessionEntity extends DashboardSessionSchema.class {}
DashboardSessionSchema.setClass(DashboardSessionEntity);
