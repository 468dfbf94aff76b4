/** The start banner's example call and its warning about a test-only setting. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startBanner } from '../../src/server/banner.js';

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
  });
});
