/**
 * The demo account (embedded demo mode only): a customer account to sign in to /dashboard with
 * at once, Enterprise so every page has something to show. Created on the first start; a
 * password file generated again (removed or unreadable) gives the existing account that password,
 * so what the banner prints always signs in.
 */
import type { DemoAccount } from '../embedded.js';
import type { Services } from '../services/index.js';

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
