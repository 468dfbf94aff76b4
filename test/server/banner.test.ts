/** The start banner's example call, what it says about the data a start found, the demo keys the demo account owns, and its warning about a test-only setting. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startBanner } from '../../src/server/banner.js';
import { LEDGER_SIGNING_KEY } from '../helpers/app.js';

const adminToken = 'generated-admin-token-value-123';
const demoKeys = { starter: `service_${'1'.repeat(64)}`, growth: `service_${'2'.repeat(64)}` };
const url = 'http://127.0.0.1:3000';

describe('start banner', () => {
  it('shows a REST call with a demo key as the example', () => {
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys);
    expect(banner).toContain(`curl -s -H 'Authorization: Bearer ${demoKeys.growth}' '${url}/api/v1/picks?limit=3'`);
    expect(banner).toContain(`curl -s -H 'Authorization: Bearer ${demoKeys.growth}' '${url}/api/v1/usage'`);
    expect(banner).not.toContain('/graphql\' -H');
  });

  it('warns when WEBHOOK_HOST_OVERRIDES, a test-only setting, is set, in production too', () => {
    for (const env of [{}, { NODE_ENV: 'production' }]) {
      const config = loadConfig({ DATA_DIR: '/srv/picks', WEBHOOK_HOST_OVERRIDES: 'hooks.test=127.0.0.1,other.test=::1', ...env });
      expect(startBanner(config, url, adminToken, null)).toContain(
        'warning: WEBHOOK_HOST_OVERRIDES is a test-only setting: webhooks for hooks.test, other.test are delivered to loopback addresses. Unset it outside tests.',
      );
    }
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys)).not.toContain('WEBHOOK_HOST_OVERRIDES');
  });

  it('says where the value engine reads odds from, never printing the feed key', () => {
    const withEnterprise = { ...demoKeys, enterprise: `service_${'3'.repeat(64)}` };
    const demo = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, withEnterprise);
    expect(demo).toContain('value engine: simulated demo feed every 60 s (DEMO_FEED)');
    expect(demo).toContain(`curl -sN -H 'Authorization: Bearer ${withEnterprise.enterprise}' '${url}/api/v1/picks/stream'`);
    const polling = startBanner(
      loadConfig({ DATA_DIR: '/srv/picks', ODDS_FEED_URL: 'https://feed.example/odds-api/', ODDS_FEED_API_KEY: 'secret-feed-key', ODDS_FEED_SPORTS: 'soccer_epl,basketball_nba' }),
      url,
      adminToken,
      null,
    );
    expect(polling).toContain('value engine: polling https://feed.example every 60 s (soccer_epl, basketball_nba)');
    expect(polling).not.toContain('secret-feed-key');
    expect(polling).not.toContain('/api/v1/picks/stream');
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks', DEMO_FEED: 'false' }), url, adminToken, demoKeys)).toContain('value engine: no odds feed');
  });

  it('prints the demo dashboard sign-in with the dashboard link, but only where it is kept in production', () => {
    const demoAccount = { email: 'demo@example.com', password: 'generated-demo-password-1' };
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys, demoAccount);
    expect(banner).toContain(`  dashboard: ${url}/dashboard/`);
    expect(banner).toContain(`  demo dashboard sign-in (kept in /srv/picks/demo-account.json): demo@example.com / generated-demo-password-1   ${url}/dashboard/login`);
    const production = startBanner(loadConfig({ DATA_DIR: '/srv/picks', NODE_ENV: 'production', ADMIN_TOKEN: 'a'.repeat(32) }), url, adminToken, demoKeys, demoAccount);
    expect(production).not.toContain('generated-demo-password-1');
    expect(production).toContain('  demo dashboard sign-in: demo@example.com, password kept in /srv/picks/demo-account.json (not printed in production)');
    expect(production).toContain(`  dashboard: ${url}/dashboard/`);
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys)).not.toContain('demo dashboard sign-in');
    // On PostgreSQL the seeded demo keys are kept nowhere: the banner says so rather than name a file.
    const postgres = { DATABASE_URL: 'postgres://picks@127.0.0.1:5432/picks', ADMIN_TOKEN: 'a'.repeat(32), WEBHOOK_SECRET_KEY: 'b'.repeat(64), LEDGER_SIGNING_KEY, NODE_ENV: 'production', DEMO_SEED: 'true' };
    const seededOnPostgres = startBanner(loadConfig(postgres), url, adminToken, demoKeys);
    expect(seededOnPostgres).toContain('  demo API keys: seeded, not kept and not printed in production (mint keys with createApiKey)');
    expect(seededOnPostgres).not.toContain('demo-keys.json');
  });

  it('says on a restart that the demo data were reused: since when (UTC, to the minute) and how many picks', () => {
    const createdAt = new Date(Date.UTC(2026, 10, 27, 10, 12, 59));
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys, null, { kind: 'reused', createdAt, picks: 1234 });
    const lines = banner.split('\n');
    expect(lines).toContain('  data: reusing the demo data in /srv/picks (created 2026-11-27 10:12 UTC, 1,234 picks); another DATA_DIR starts a new demo');
    // Right after the database line.
    expect(lines[lines.findIndex((line) => line.startsWith('  database: embedded PGlite in /srv/picks')) + 1]).toMatch(/^ {2}data: reusing/);
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks', DEMO_SEED: 'false' }), url, adminToken, null, null, { kind: 'reused', createdAt, picks: 1 })).toContain(
      '  data: reusing the data in /srv/picks (created 2026-11-27 10:12 UTC, 1 pick)\n',
    );
  });

  it('says on a first start that it seeded a new demo; nothing about data on PostgreSQL or without a summary', () => {
    const createdAt = new Date(Date.UTC(2026, 10, 27, 10, 12));
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys, null, { kind: 'seeded', createdAt, picks: 259 })).toContain(
      '  data: a new demo seeded in /srv/picks (259 picks)\n',
    );
    expect(startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, demoKeys)).not.toContain('  data:');
    const postgres = loadConfig({ DATA_DIR: '/srv/picks', DATABASE_URL: 'postgres://picks@127.0.0.1/picks', ADMIN_TOKEN: 'a'.repeat(32), WEBHOOK_SECRET_KEY: 'b'.repeat(64), LEDGER_SIGNING_KEY });
    expect(startBanner(postgres, url, adminToken, null, null, { kind: 'reused', createdAt, picks: 5 })).not.toContain('  data:');
  });

  it('names the demo key the demo account owns, and uses it in the example calls so they show on its dashboard', () => {
    const keys = { ...demoKeys, enterprise: `service_${'3'.repeat(64)}` };
    const demoAccount = { email: 'demo@example.com', password: 'generated-demo-password-1', keyTiers: ['enterprise'] };
    const banner = startBanner(loadConfig({ DATA_DIR: '/srv/picks' }), url, adminToken, keys, demoAccount);
    expect(banner).toContain('  demo API keys (demo@example.com owns the enterprise one; the others belong to no account):');
    expect(banner).toContain(`    enterprise ${keys.enterprise}   on the dashboard, with its usage and webhooks`);
    expect(banner).toContain(`    growth     ${keys.growth}\n`);
    expect(banner).toContain(`curl -s -H 'Authorization: Bearer ${keys.enterprise}' '${url}/api/v1/usage'`);
    expect(banner).not.toContain(`Bearer ${keys.growth}`);
  });

  it('with a credit budget: the month so far, its source, the projection and the next poll per sport, or the stop', () => {
    const config = loadConfig({
      DATA_DIR: '/srv/picks',
      ODDS_FEED_URL: 'https://feed.example.com?apiKey=secret',
      ODDS_FEED_API_KEY: 'secret-key-123',
      ODDS_FEED_SPORTS: 'soccer_epl,basketball_nba',
      ODDS_FEED_MONTHLY_CREDITS: '100000',
    });
    const now = new Date('2026-11-28T14:00:00Z');
    const view = {
      month: '2026-11',
      monthEndsAt: new Date('2026-12-01T00:00:00Z'),
      monthlyCredits: 100_000,
      reserveCredits: 10_000,
      reserveLeft: 9_400,
      usedCredits: 61_234,
      remainingCredits: 38_766,
      source: 'feed' as const,
      projectedMonthCredits: 97_500,
      oddsCreditsPerPoll: 3,
      stopped: null,
      nextPolls: [
        { sportKey: 'soccer_epl', odds: new Date('2026-11-28T14:05:00Z'), oddsPurpose: 'closing' as const, scores: new Date('2026-11-28T16:00:00Z') },
        { sportKey: 'basketball_nba', odds: new Date('2026-11-29T01:00:00Z'), oddsPurpose: 'routine' as const, scores: null },
      ],
      scheduleReadAt: now,
      planning: true,
    };
    const banner = startBanner(config, url, adminToken, null, null, null, { view, now });
    expect(banner).toContain('  value engine: polling https://feed.example.com by a monthly credit plan that follows the kickoffs (soccer_epl, basketball_nba)\n');
    expect(banner).toContain(
      "  feed credits: 100,000 a month (10,000 kept for closing lines), 3 a poll; 2026-11: used 61,234 (the feed's headers), 38,766 left, month-end projection 97,500\n",
    );
    expect(banner).toContain('    next polls (UTC): soccer_epl odds 14:05 UTC (closing), scores 16:00 UTC; basketball_nba odds 2026-11-29 01:00 UTC (routine)\n');
    expect(banner).not.toContain('secret');
    const stopped = startBanner(config, url, adminToken, null, null, null, { view: { ...view, stopped: { reason: 'feed_reports_no_credits' as const, at: now } }, now });
    expect(stopped).toContain('    polls STOPPED since 2026-11-28 14:00 UTC: the feed reports no credits left; they resume next month, with another ODDS_FEED_MONTHLY_CREDITS or when the feed reports credits again\n');
    const unread = startBanner(config, url, adminToken, null, null, null, { view: { ...view, scheduleReadAt: null }, now });
    expect(unread).toContain('    next polls: planned once the events list is read (it could not be yet)\n');
  });
});
