import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_TIER_LIMITS, describeConfig, loadClusterConfig, loadConfig, VARIABLES } from '../src/config.js';
import { CONFIG_DOCS, markedSections, renderConfigDocs, sectionId, sectionsOf } from '../src/config/docs.js';
import { DEFAULT_MATCH_MIN_MINUTES } from '../src/domain/settlement.js';
import { SPORT_SLUGS } from '../src/domain/sports.js';
import { SIMULATED_MATCH_MIN_MINUTES } from '../src/services/value-engine/simulated-feed.js';
import { COSIGNATURE_ALGORITHM_ED25519, generateSignerKey, parseSignerKey } from '../src/domain/signed-note.js';
import { LEDGER_SIGNING_KEY } from './helpers/app.js';

const pg = {
  DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
  ADMIN_TOKEN: 'a-long-enough-admin-token',
  WEBHOOK_SECRET_KEY: 'q83vEjRWeJASNFZ4kBI0VniQEjRWeJASNFZ4kBI0Vng=',
  LEDGER_SIGNING_KEY,
};

/** loadConfig(env) refuses with a ConfigError of one line that names `name`. */
function expectOneLineRefusal(env: Record<string, string>, name: string): void {
  let refusal: unknown = null;
  try {
    loadConfig(env);
  } catch (error) {
    refusal = error;
  }
  expect(refusal).toBeInstanceOf(ConfigError);
  expect((refusal as Error).message).toContain(name);
  expect((refusal as Error).message).not.toContain('\n');
}

describe('loadConfig', () => {
  it('defaults to embedded mode with demo data and spec limits', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: null,
      redisUrl: null,
      adminToken: null,
      demoSeed: true,
      streamHeartbeatSeconds: 30,
      streamTokenMaxStreams: 1000,
      streamTokenOpensPerMinute: 30,
      logLevel: 'info',
      webhookRetryScheduleMs: [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000],
      webhookLeaseMs: 30_000,
      anonymousGraphqlLimit: 120,
      graphqlCorsOrigins: [],
    });
    expect(config.tierLimits).toEqual(DEFAULT_TIER_LIMITS);
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('reads the stake advice, a quarter of full Kelly capped at 2 % by default', () => {
    expect(loadConfig(pg).stakeAdvice).toEqual({ kellyMultiplier: 0.25, maxPct: 2 });
    expect(loadConfig({ ...pg, STAKE_KELLY_MULTIPLIER: '1', STAKE_MAX_PCT: '0.5' }).stakeAdvice).toEqual({ kellyMultiplier: 1, maxPct: 0.5 });
  });

  it('turns the demo seed off by default with PostgreSQL', () => {
    expect(loadConfig(pg).demoSeed).toBe(false);
    expect(loadConfig({ ...pg, DEMO_SEED: 'true' }).demoSeed).toBe(true);
  });

  it('parses every variable', () => {
    const config = loadConfig({
      ...pg,
      PORT: '8080',
      HOST: '0.0.0.0',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATA_DIR: '/tmp/picks',
      DEMO_SEED: 'no',
      TIER_LIMITS: '{"starter":{"hourly":25},"enterprise":{"monthly":40}}',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,500ms,1m',
      WEBHOOK_LEASE_SECONDS: '4',
      STREAM_HEARTBEAT_SECONDS: '2',
      WEBHOOK_HOST_OVERRIDES: 'receiver.test=127.0.0.1,other.test=::1',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,fd00::/8,loopback',
      ANONYMOUS_GRAPHQL_LIMIT: '30',
      GRAPHQL_CORS_ORIGINS: 'https://ops.example.com, http://127.0.0.1:5173,https://[::1]:8443',
    });
    expect(config.trustProxy).toEqual(['10.0.0.1', '10.1.0.0/16', 'fd00::/8', 'loopback']);
    expect(config.anonymousGraphqlLimit).toBe(30);
    expect(config.graphqlCorsOrigins).toEqual(['https://ops.example.com', 'http://127.0.0.1:5173', 'https://[::1]:8443']);
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0', redisUrl: 'redis://127.0.0.1:6379', dataDir: '/tmp/picks', demoSeed: false, streamHeartbeatSeconds: 2, logLevel: 'debug' });
    expect(config.tierLimits.starter).toEqual({ hourly: 25, monthly: 10_000 });
    expect(config.tierLimits.enterprise).toEqual({ hourly: 10_000, monthly: 40 });
    expect(config.tierLimits.growth).toEqual(DEFAULT_TIER_LIMITS.growth);
    expect(config.webhookRetryScheduleMs).toEqual([1000, 1000, 2000, 500, 60_000]);
    expect(config.webhookLeaseMs).toBe(4_000);
    expect([...config.webhookHostOverrides]).toEqual([['receiver.test', '127.0.0.1'], ['other.test', '::1']]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://127.0.0.1'],
    ['ADMIN_TOKEN', 'short'],
    ['DEMO_SEED', 'maybe'],
    ['TIER_LIMITS', 'not json'],
    ['TIER_LIMITS', '{"gold":{"hourly":1}}'],
    ['TIER_LIMITS', '{"starter":{"daily":1}}'],
    ['TIER_LIMITS', '{"starter":{"hourly":0}}'],
    ['TIER_LIMITS', '{"starter":{"hourly":1.5}}'],
    ['TIER_LIMITS', '[]'],
    ['WEBHOOK_RETRY_SCHEDULE', '1s,1s'],
    ['WEBHOOK_RETRY_SCHEDULE', '1s,1s,1s,1s,forever'],
    ['STREAM_HEARTBEAT_SECONDS', '0'],
    ['STREAM_HEARTBEAT_SECONDS', '1.5'],
    ['WEBHOOK_LEASE_SECONDS', '2'],
    ['WEBHOOK_LEASE_SECONDS', '30s'],
    ['WEBHOOK_HOST_OVERRIDES', 'receiver.test=10.0.0.5'],
    ['WEBHOOK_HOST_OVERRIDES', 'receiver.test=8.8.8.8'],
    ['WEBHOOK_HOST_OVERRIDES', 'receiver.test'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '*'],
    ['TRUST_PROXY', '300.1.1.1'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '10.0.0.0/8/8'],
    ['TRUST_PROXY', '10.0.0.0/'],
    ['TRUST_PROXY', '010.0.0.1'],
    ['TRUST_PROXY', 'fd00::/129'],
    ['TRUST_PROXY', '10.0.0.1,,10.0.0.2'],
    ['TRUST_PROXY', 'proxy.internal'],
    ['LOG_LEVEL', 'loud'],
    ['ANONYMOUS_GRAPHQL_LIMIT', '0'],
    ['ANONYMOUS_GRAPHQL_LIMIT', '-5'],
    ['ANONYMOUS_GRAPHQL_LIMIT', '1.5'],
    ['ANONYMOUS_GRAPHQL_LIMIT', 'lots'],
    ['ANONYMOUS_GRAPHQL_LIMIT', '10000000'],
    ['STAKE_KELLY_MULTIPLIER', '0'],
    ['STAKE_KELLY_MULTIPLIER', '1.5'],
    ['STAKE_KELLY_MULTIPLIER', '-0.25'],
    ['STAKE_KELLY_MULTIPLIER', 'quarter'],
    ['STAKE_MAX_PCT', '0'],
    ['STAKE_MAX_PCT', '101'],
    ['STAKE_MAX_PCT', '2%'],
    ['GRAPHQL_CORS_ORIGINS', '*'],
    ['GRAPHQL_CORS_ORIGINS', 'null'],
    ['GRAPHQL_CORS_ORIGINS', 'ops.example.com'],
    ['GRAPHQL_CORS_ORIGINS', 'https://ops.example.com/'],
    ['GRAPHQL_CORS_ORIGINS', 'https://ops.example.com/graphql'],
    ['GRAPHQL_CORS_ORIGINS', 'HTTPS://Ops.Example.com'],
    ['GRAPHQL_CORS_ORIGINS', 'https://ops.example.com:443'],
    ['GRAPHQL_CORS_ORIGINS', 'https://user:pw@ops.example.com'],
    ['GRAPHQL_CORS_ORIGINS', 'ftp://ops.example.com'],
    ['GRAPHQL_CORS_ORIGINS', 'https://a.example.com,,https://b.example.com'],
    ['WEBHOOK_SECRET_KEY', 'too-short'],
    ['WEBHOOK_SECRET_KEY', 'ab'.repeat(31)],
    ['WEBHOOK_SECRET_KEY', 'zz'.repeat(32)],
    ['WEBHOOK_SECRET_KEY_PREVIOUS', 'ab'.repeat(32) + ',nope'],
  ])('rejects %s=%s with one line naming the variable', (name, raw) => {
    expectOneLineRefusal({ ...pg, [name]: raw }, name);
  });

  it('requires ADMIN_TOKEN with PostgreSQL, except for migrations', () => {
    expect(() => loadConfig({ DATABASE_URL: pg.DATABASE_URL, WEBHOOK_SECRET_KEY: pg.WEBHOOK_SECRET_KEY })).toThrow(/ADMIN_TOKEN/);
    expect(loadConfig({ DATABASE_URL: pg.DATABASE_URL }, { requireAdminToken: false }).adminToken).toBeNull();
  });

  it('requires WEBHOOK_SECRET_KEY with PostgreSQL (hex or base64, 32 bytes), and takes earlier keys for rotation', () => {
    expect(() => loadConfig({ DATABASE_URL: pg.DATABASE_URL, ADMIN_TOKEN: pg.ADMIN_TOKEN })).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(loadConfig({}).webhookSecretKey).toBeNull();
    const hex = loadConfig({ ...pg, WEBHOOK_SECRET_KEY: 'ab'.repeat(32), WEBHOOK_SECRET_KEY_PREVIOUS: `${'cd'.repeat(32)}, ${pg.WEBHOOK_SECRET_KEY}` });
    expect(hex.webhookSecretKey).toEqual(Buffer.alloc(32, 0xab));
    expect(hex.webhookSecretKeysPrevious.map((key) => key.length)).toEqual([32, 32]);
    expect(loadConfig(pg).webhookSecretKey!.toString('base64')).toBe(pg.WEBHOOK_SECRET_KEY);
  });

  it('requires LEDGER_SIGNING_KEY with PostgreSQL; its name is the origin; refuses keys and witnesses of the wrong form', () => {
    const { LEDGER_SIGNING_KEY: _key, ...withoutKey } = pg;
    expectOneLineRefusal(withoutKey, 'LEDGER_SIGNING_KEY');
    expect(loadConfig(pg).ledger).toMatchObject({ origin: 'test.localhost/ledger', checkpointSeconds: 60, witnesses: [] });
    expect(loadConfig(pg).ledger.signingKey!.text).toBe(parseSignerKey(LEDGER_SIGNING_KEY).text);
    expect(loadConfig({}).ledger).toMatchObject({ origin: 'localhost/picks-ledger', signingKey: null });
    expect(loadConfig({ LEDGER_ORIGIN: 'picks.example/ledger' }).ledger.origin).toBe('picks.example/ledger');
    const witness = parseSignerKey(generateSignerKey('witness.example/w1', COSIGNATURE_ALGORITHM_ED25519)).text;
    expect(loadConfig({ ...pg, LEDGER_WITNESSES: `${witness} https://w.example/ , ${parseSignerKey(generateSignerKey('w2', COSIGNATURE_ALGORITHM_ED25519)).text} http://127.0.0.1:7381` }).ledger.witnesses.map((w) => w.url)).toEqual([
      'https://w.example',
      'http://127.0.0.1:7381',
    ]);
    const refused: [string, string][] = [
      ['LEDGER_SIGNING_KEY', 'nope'],
      ['LEDGER_SIGNING_KEY', parseSignerKey(LEDGER_SIGNING_KEY).text],
      ['LEDGER_SIGNING_KEY', LEDGER_SIGNING_KEY.replace('+7f448092+', '+00000000+')],
      ['LEDGER_SIGNING_KEY', generateSignerKey('test.localhost/ledger', COSIGNATURE_ALGORITHM_ED25519)],
      ['LEDGER_ORIGIN', 'another.example/ledger'],
      ['LEDGER_ORIGIN', 'has space'],
      ['LEDGER_ORIGIN', 'a+b'],
      ['LEDGER_CHECKPOINT_SECONDS', '0'],
      ['LEDGER_CHECKPOINT_SECONDS', '86401'],
      ['LEDGER_CHECKPOINT_SECONDS', 'minute'],
      ['LEDGER_WITNESSES', witness],
      ['LEDGER_WITNESSES', `${witness} ftp://w.example`],
      ['LEDGER_WITNESSES', `${witness} not-a-url`],
      ['LEDGER_WITNESSES', `${parseSignerKey(LEDGER_SIGNING_KEY).text} https://w.example`],
      ['LEDGER_WITNESSES', `${witness} https://a.example,${witness} https://b.example`],
      ['LEDGER_WITNESSES', `${witness} https://a.example extra`],
      ['LEDGER_WITNESSES', `${witness} https://user:pw@w.example`],
      ['LEDGER_WITNESSES', `${witness} https://w.example/?x=1`],
      ['LEDGER_WITNESSES', `${witness} https://w.example/#f`],
      ['LEDGER_PREVIOUS_KEY_ID', 'xyz'],
      ['LEDGER_PREVIOUS_KEY_ID', '7f4480921'],
    ];
    expect(loadConfig({ ...pg, LEDGER_PREVIOUS_KEY_ID: '7F448092' }).ledger.previousKeyId).toBe('7f448092');
    for (const [name, value] of refused) expectOneLineRefusal({ ...pg, [name]: value }, name);
    // The key is never shown, nor a witness URL's password in a refusal.
    expect(() => loadConfig({ ...pg, LEDGER_WITNESSES: `${witness} https://user:hunter2@w.example` })).toThrow(/^(?!.*hunter2)/s);
    expect(JSON.stringify(describeConfig(pg))).not.toContain(LEDGER_SIGNING_KEY.split('+').slice(4).join('+'));
  });

  it('serves GraphQL introspection outside production, not in production, unless GRAPHQL_INTROSPECTION says otherwise', () => {
    expect(loadConfig({}).graphqlIntrospection).toBe(true);
    expect(loadConfig({ ...pg, NODE_ENV: 'production' })).toMatchObject({ production: true, graphqlIntrospection: false });
    expect(loadConfig({ ...pg, NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).graphqlIntrospection).toBe(true);
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'off' }).graphqlIntrospection).toBe(false);
    expect(loadConfig({ GRAPHQL_INTROSPECTION: ' ' }).graphqlIntrospection).toBe(true);
    expect(() => loadConfig({ GRAPHQL_INTROSPECTION: 'sometimes' })).toThrow(/^Invalid configuration: GRAPHQL_INTROSPECTION must be one of true, false/);
  });
});

describe('value engine configuration', () => {
  const feed = { ODDS_FEED_URL: 'http://127.0.0.1:9/', ODDS_FEED_API_KEY: 'k', ODDS_FEED_SPORTS: 'soccer_epl' };

  it('reads h2h, spreads and totals unless ODDS_FEED_MARKETS narrows them', () => {
    expect(loadConfig({}).valueEngine.markets).toEqual(['h2h', 'spreads', 'totals']);
    expect(loadConfig({ ODDS_FEED_MARKETS: 'h2h' }).valueEngine.markets).toEqual(['h2h']);
  });

  it('has the documented defaults: no HTTP feed; the simulated demo feed in embedded demo mode only', () => {
    const embedded = loadConfig({}).valueEngine;
    expect(embedded).toMatchObject({
      feed: null,
      demoFeed: true,
      sportKeys: [],
      regions: ['eu'],
      oddsPollSeconds: 60,
      scoresPollSeconds: 300,
      oddsHistoryDays: 14,
      detection: {
        // The demo's simulated feed quotes a book and an exchange; without the demo, pinnacle alone.
        references: [
          { key: 'pinnacle', weight: 1 },
          { key: 'betfair_ex_eu', weight: 1 },
        ],
        devigMethod: 'power',
        maxReferenceSpread: 0.03,
        maxReferenceMargin: 0.08,
        taxRates: {},
        defaultTaxRate: 0.053,
        minEdge: 0.02,
        oddsRange: { min: 1.2, max: 15 },
        horizonHours: 72,
        referenceMaxAgeSeconds: 300,
        reviewEdge: 0.25,
      },
    });
    // REFERENCE_BOOKMAKER is the one-book alias of REFERENCE_BOOKMAKERS.
    expect(loadConfig({ REFERENCE_BOOKMAKER: 'betfair_ex_eu' }).valueEngine.detection.references).toEqual([{ key: 'betfair_ex_eu', weight: 1 }]);
    expect(loadConfig({ REFERENCE_BOOKMAKERS: 'circa:100' }).valueEngine.detection.references).toEqual([{ key: 'circa', weight: 100 }]);
    expect(loadConfig({ DEMO_SEED: 'false' }).valueEngine.demoFeed).toBe(false);
    expect(loadConfig({ DEMO_SEED: 'false' }).valueEngine.detection.references).toEqual([{ key: 'pinnacle', weight: 1 }]);
    expect(loadConfig({ REFERENCE_BOOKMAKER: 'pinnacle' }).valueEngine.detection.references).toEqual([{ key: 'pinnacle', weight: 1 }]);
    expect(loadConfig({ DEMO_FEED: 'false' }).valueEngine.demoFeed).toBe(false);
    expect(loadConfig(pg).valueEngine.demoFeed).toBe(false);
    expect(loadConfig({ ...pg, DEMO_FEED: 'true' }).valueEngine.demoFeed).toBe(true);
    expect(loadConfig(feed).valueEngine.demoFeed).toBe(false);
  });

  it('parses every variable', () => {
    const engine = loadConfig({
      ...pg,
      ...feed,
      ODDS_FEED_SPORTS: 'soccer_epl, basketball_nba,tennis_atp_finals,soccer_epl',
      ODDS_FEED_REGIONS: 'uk,eu',
      ODDS_FEED_MARKETS: 'totals, h2h,totals',
      ODDS_POLL_SECONDS: '15',
      SCORES_POLL_SECONDS: '120',
      REFERENCE_BOOKMAKERS: 'pinnacle, circasports:1,betfair_ex_eu:0.5',
      REFERENCE_MAX_SPREAD: '0.05',
      REFERENCE_MAX_MARGIN: '0.06',
      REFERENCE_MAX_EXCHANGE_SPREAD: '0.04',
      DEVIG_METHOD: 'shin',
      BOOKMAKER_TAX_RATES: '{"tipico":0.053,"betfair_ex_eu":0.02}',
      PICK_MIN_EDGE: '0.03',
      PICK_ODDS_RANGE: '1.5-10',
      PICK_HORIZON_HOURS: '48',
      REFERENCE_MAX_AGE_SECONDS: '120',
      PICK_REVIEW_EDGE: '0.4',
      PICK_CONFIRM_POLLS: '3',
      ODDS_HISTORY_DAYS: '30',
      FEED_CLOCK_SKEW_SECONDS: '30',
      MATCH_MIN_MINUTES: '{"soccer":100}',
      CLOSING_LINE_MAX_AGE_SECONDS: '1800',
    }).valueEngine;
    expect(engine).toEqual({
      feed: { url: 'http://127.0.0.1:9', apiKey: 'k' },
      demoFeed: false,
      sportKeys: ['soccer_epl', 'basketball_nba', 'tennis_atp_finals'],
      regions: ['uk', 'eu'],
      markets: ['totals', 'h2h'],
      oddsPollSeconds: 15,
      confirmPolls: 3,
      scoresPollSeconds: 120,
      credits: null,
      oddsHistoryDays: 30,
      detection: {
        references: [
          { key: 'pinnacle', weight: 1 },
          { key: 'circasports', weight: 1 },
          { key: 'betfair_ex_eu', weight: 0.5 },
        ],
        devigMethod: 'shin',
        maxReferenceSpread: 0.05,
        maxReferenceMargin: 0.06,
        taxRates: { tipico: 0.053, betfair_ex_eu: 0.02 },
        defaultTaxRate: 0.053,
        maxExchangeSpread: 0.04,
        minEdge: 0.03,
        oddsRange: { min: 1.5, max: 10 },
        horizonHours: 48,
        referenceMaxAgeSeconds: 120,
        reviewEdge: 0.4,
        clockSkewSeconds: 30,
      },
      settlement: { matchMinMinutes: { ...DEFAULT_MATCH_MIN_MINUTES, soccer: 100 }, closingLineMaxAgeSeconds: 1800 },
    });
  });

  it.each([
    [{ ODDS_FEED_URL: 'ftp://feed.example' }, 'ODDS_FEED_URL'],
    [{ ODDS_FEED_URL: 'not a url' }, 'ODDS_FEED_URL'],
    [{ ...feed, ODDS_FEED_API_KEY: '' }, 'ODDS_FEED_API_KEY'],
    [{ ...feed, ODDS_FEED_SPORTS: '' }, 'ODDS_FEED_SPORTS'],
    [{ ...feed, ODDS_FEED_SPORTS: 'golf_masters' }, 'ODDS_FEED_SPORTS'],
    [{ ...feed, ODDS_FEED_SPORTS: 'rugbyleague_nrl' }, 'ODDS_FEED_SPORTS'],
    [{ ...feed, ODDS_FEED_SPORTS: 'soccer_epl,,soccer_efl_champ' }, 'ODDS_FEED_SPORTS'],
    [{ ...feed, ODDS_FEED_SPORTS: 'Soccer_EPL' }, 'ODDS_FEED_SPORTS'],
    [{ ...feed, DEMO_FEED: 'true' }, 'DEMO_FEED'],
    [{ DEMO_FEED: 'sometimes' }, 'DEMO_FEED'],
    [{ ODDS_FEED_REGIONS: 'mars' }, 'ODDS_FEED_REGIONS'],
    [{ ODDS_FEED_REGIONS: 'eu,' }, 'ODDS_FEED_REGIONS'],
    [{ ODDS_FEED_MARKETS: 'h2h,alternate_spreads' }, 'ODDS_FEED_MARKETS'],
    [{ ODDS_FEED_MARKETS: 'H2H' }, 'ODDS_FEED_MARKETS'],
    [{ ODDS_FEED_MARKETS: 'h2h,' }, 'ODDS_FEED_MARKETS'],
    [{ ODDS_POLL_SECONDS: '0' }, 'ODDS_POLL_SECONDS'],
    [{ ODDS_POLL_SECONDS: '3601' }, 'ODDS_POLL_SECONDS'],
    [{ ODDS_POLL_SECONDS: '1.5' }, 'ODDS_POLL_SECONDS'],
    [{ SCORES_POLL_SECONDS: 'often' }, 'SCORES_POLL_SECONDS'],
    [{ REFERENCE_BOOKMAKER: 'Pinnacle' }, 'REFERENCE_BOOKMAKER'],
    [{ REFERENCE_BOOKMAKER: 'pin nacle' }, 'REFERENCE_BOOKMAKER'],
    [{ REFERENCE_BOOKMAKER: 'pinnacle', REFERENCE_BOOKMAKERS: 'pinnacle' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle,' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle,pinnacle:2' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:0' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:100.5' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:-1' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:1e2' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle:1:2' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'Pinnacle' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_BOOKMAKERS: 'pinnacle;circa' }, 'REFERENCE_BOOKMAKERS'],
    [{ REFERENCE_MAX_SPREAD: '1.5' }, 'REFERENCE_MAX_SPREAD'],
    [{ REFERENCE_MAX_SPREAD: '-0.01' }, 'REFERENCE_MAX_SPREAD'],
    [{ REFERENCE_MAX_SPREAD: '3%' }, 'REFERENCE_MAX_SPREAD'],
    [{ REFERENCE_MAX_MARGIN: '2' }, 'REFERENCE_MAX_MARGIN'],
    [{ REFERENCE_MAX_MARGIN: 'wide' }, 'REFERENCE_MAX_MARGIN'],
    [{ REFERENCE_MAX_EXCHANGE_SPREAD: '1.5' }, 'REFERENCE_MAX_EXCHANGE_SPREAD'],
    [{ REFERENCE_MAX_EXCHANGE_SPREAD: '-0.01' }, 'REFERENCE_MAX_EXCHANGE_SPREAD'],
    [{ REFERENCE_MAX_EXCHANGE_SPREAD: 'thin' }, 'REFERENCE_MAX_EXCHANGE_SPREAD'],
    [{ DEVIG_METHOD: 'logarithmic' }, 'DEVIG_METHOD'],
    [{ BOOKMAKER_TAX_RATES: 'tipico=0.05' }, 'BOOKMAKER_TAX_RATES'],
    [{ BOOKMAKER_TAX_RATES: '[0.05]' }, 'BOOKMAKER_TAX_RATES'],
    [{ BOOKMAKER_TAX_RATES: '{"tipico":1}' }, 'BOOKMAKER_TAX_RATES'],
    [{ BOOKMAKER_TAX_RATES: '{"tipico":-0.1}' }, 'BOOKMAKER_TAX_RATES'],
    [{ BOOKMAKER_TAX_RATES: '{"tipico":"0.05"}' }, 'BOOKMAKER_TAX_RATES'],
    [{ BOOKMAKER_TAX_RATES: '{"Tipico":0.05}' }, 'BOOKMAKER_TAX_RATES'],
    [{ PICK_MIN_EDGE: '-0.01' }, 'PICK_MIN_EDGE'],
    [{ PICK_MIN_EDGE: '1.5' }, 'PICK_MIN_EDGE'],
    [{ PICK_MIN_EDGE: '2%' }, 'PICK_MIN_EDGE'],
    [{ PICK_MIN_EDGE: '1e-2' }, 'PICK_MIN_EDGE'],
    [{ PICK_ODDS_RANGE: '15-1.2' }, 'PICK_ODDS_RANGE'],
    [{ PICK_ODDS_RANGE: '1-15' }, 'PICK_ODDS_RANGE'],
    [{ PICK_ODDS_RANGE: '2-2' }, 'PICK_ODDS_RANGE'],
    [{ PICK_ODDS_RANGE: '1.2' }, 'PICK_ODDS_RANGE'],
    [{ PICK_ODDS_RANGE: '1.2-2000' }, 'PICK_ODDS_RANGE'],
    [{ PICK_HORIZON_HOURS: '0' }, 'PICK_HORIZON_HOURS'],
    [{ PICK_HORIZON_HOURS: '721' }, 'PICK_HORIZON_HOURS'],
    [{ PICK_CONFIRM_POLLS: '0' }, 'PICK_CONFIRM_POLLS'],
    [{ PICK_CONFIRM_POLLS: '6' }, 'PICK_CONFIRM_POLLS'],
    [{ PICK_CONFIRM_POLLS: '2.5' }, 'PICK_CONFIRM_POLLS'],
    [{ PICK_CONFIRM_POLLS: 'two' }, 'PICK_CONFIRM_POLLS'],
    [{ REFERENCE_MAX_AGE_SECONDS: '86401' }, 'REFERENCE_MAX_AGE_SECONDS'],
    [{ PICK_REVIEW_EDGE: '0.02' }, 'PICK_REVIEW_EDGE'],
    [{ PICK_REVIEW_EDGE: '0.01' }, 'PICK_REVIEW_EDGE'],
    [{ PICK_REVIEW_EDGE: '10.5' }, 'PICK_REVIEW_EDGE'],
    [{ PICK_MIN_EDGE: '0.3' }, 'PICK_REVIEW_EDGE'],
    [{ ODDS_HISTORY_DAYS: '0' }, 'ODDS_HISTORY_DAYS'],
    [{ ODDS_HISTORY_DAYS: '366' }, 'ODDS_HISTORY_DAYS'],
  ])('refuses %j with one line naming %s', (env, name) => {
    expectOneLineRefusal(env as Record<string, string>, name);
  });
});

describe('settlement and clock configuration', () => {
  const pgEngine = (env: Record<string, string> = {}) => loadConfig({ ...pg, ...env }).valueEngine;
  const every = (minutes: number) => Object.fromEntries(SPORT_SLUGS.map((sport) => [sport, minutes]));

  it('MATCH_MIN_MINUTES defaults to the per-sport floors', () => {
    expect(pgEngine().settlement.matchMinMinutes).toEqual(DEFAULT_MATCH_MIN_MINUTES);
    expect(pgEngine().settlement.matchMinMinutes).toMatchObject({ soccer: 105, basketball: 120, tennis: 45, esports: 20 });
  });

  it('MATCH_MIN_MINUTES as one number applies to every sport, 0 included', () => {
    expect(pgEngine({ MATCH_MIN_MINUTES: '90' }).settlement.matchMinMinutes).toEqual(every(90));
    expect(pgEngine({ MATCH_MIN_MINUTES: '0' }).settlement.matchMinMinutes).toEqual(every(0));
  });

  it('MATCH_MIN_MINUTES as a JSON object changes only the sports it names', () => {
    const minutes = pgEngine({ MATCH_MIN_MINUTES: '{"soccer":100,"tennis":60}' }).settlement.matchMinMinutes;
    expect(minutes).toEqual({ ...DEFAULT_MATCH_MIN_MINUTES, soccer: 100, tennis: 60 });
  });

  it('the embedded demo feed defaults every sport to SIMULATED_MATCH_MIN_MINUTES unless MATCH_MIN_MINUTES is set', () => {
    const demo = loadConfig({}).valueEngine;
    expect(demo.demoFeed).toBe(true);
    expect(demo.settlement.matchMinMinutes).toEqual(every(SIMULATED_MATCH_MIN_MINUTES));
    expect(loadConfig({ MATCH_MIN_MINUTES: '30' }).valueEngine.settlement.matchMinMinutes).toEqual(every(30));
    expect(loadConfig({ MATCH_MIN_MINUTES: '{"soccer":100}' }).valueEngine.settlement.matchMinMinutes).toEqual({
      ...every(SIMULATED_MATCH_MIN_MINUTES),
      soccer: 100,
    });
    // Without the demo feed, embedded mode keeps the real floors.
    expect(loadConfig({ DEMO_FEED: 'false' }).valueEngine.settlement.matchMinMinutes).toEqual(DEFAULT_MATCH_MIN_MINUTES);
  });

  it('FEED_CLOCK_SKEW_SECONDS defaults to 60 and takes 0 to 600', () => {
    expect(pgEngine().detection.clockSkewSeconds).toBe(60);
    expect(pgEngine({ FEED_CLOCK_SKEW_SECONDS: '0' }).detection.clockSkewSeconds).toBe(0);
    expect(pgEngine({ FEED_CLOCK_SKEW_SECONDS: '600' }).detection.clockSkewSeconds).toBe(600);
  });

  it('CLOSING_LINE_MAX_AGE_SECONDS defaults to 3600 and takes 60 to 86400', () => {
    expect(pgEngine().settlement.closingLineMaxAgeSeconds).toBe(3600);
    expect(pgEngine({ CLOSING_LINE_MAX_AGE_SECONDS: '60' }).settlement.closingLineMaxAgeSeconds).toBe(60);
    expect(pgEngine({ CLOSING_LINE_MAX_AGE_SECONDS: '86400' }).settlement.closingLineMaxAgeSeconds).toBe(86_400);
  });

  it.each([
    ['MATCH_MIN_MINUTES', '-1'],
    ['MATCH_MIN_MINUTES', '1441'],
    ['MATCH_MIN_MINUTES', '1.5'],
    ['MATCH_MIN_MINUTES', 'abc'],
    ['MATCH_MIN_MINUTES', '[]'],
    ['MATCH_MIN_MINUTES', '{"golf":10}'],
    ['MATCH_MIN_MINUTES', '{"soccer":-5}'],
    ['MATCH_MIN_MINUTES', '{"soccer":"90"}'],
    ['FEED_CLOCK_SKEW_SECONDS', '-1'],
    ['FEED_CLOCK_SKEW_SECONDS', '601'],
    ['FEED_CLOCK_SKEW_SECONDS', 'x'],
    ['CLOSING_LINE_MAX_AGE_SECONDS', '59'],
    ['CLOSING_LINE_MAX_AGE_SECONDS', '86401'],
  ])('refuses %s=%s with one line naming the variable', (name, raw) => {
    for (const env of [{ ...pg, [name]: raw }, { [name]: raw }]) expectOneLineRefusal(env, name);
  });
});

describe('the configuration table', () => {
  const root = path.resolve(import.meta.dirname, '..');
  const blocks = (markdown: string) => markdown.match(/<!-- config:start[\s\S]*?<!-- config:end -->/g) ?? [];

  it.each(CONFIG_DOCS)('%s carries the tables generated from it (npm run config:docs)', (file) => {
    const markdown = readFileSync(path.join(root, file), 'utf8');
    expect(markedSections(markdown).length).toBeGreaterThan(0);
    expect(blocks(markdown)).toEqual(blocks(renderConfigDocs(markdown, VARIABLES)));
  });

  it('README.md lists every section, docs/VALUE_ENGINE.md the value engine', () => {
    expect(markedSections(readFileSync(path.join(root, 'README.md'), 'utf8'))).toEqual(['all']);
    expect(markedSections(readFileSync(path.join(root, 'docs/VALUE_ENGINE.md'), 'utf8'))).toEqual([sectionId('Value engine')]);
    const engine = Object.entries(VARIABLES).filter(([, row]) => row.section === 'Value engine').map(([name]) => name);
    expect(engine).toEqual(expect.arrayContaining(['CLOSING_LINE_MAX_AGE_SECONDS', 'FEED_CLOCK_SKEW_SECONDS', 'MATCH_MIN_MINUTES', 'PICK_ODDS_RANGE', 'DEMO_FEED']));
  });

  it('declares every variable with a section, a one-line description and what it allows', () => {
    expect(sectionsOf(VARIABLES)).toEqual(['Storage', 'Server', 'API', 'Streams', 'Webhooks', 'Ledger', 'Picks', 'Value engine', 'Cluster']);
    for (const [name, row] of Object.entries(VARIABLES)) {
      expect(name).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(row.description, name).toMatch(/^\S[^\n]{5,}$/);
      expect(row.kind.allowed, name).toMatch(/^\S[^\n]*$/);
    }
  });

  it('declares every variable the code reads from the environment', () => {
    const read = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []));
    for (const file of walk(path.join(root, 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/process\.env(?:\.|\[\s*['"])([A-Z][A-Z0-9_]*)/g)) read.add(match[1]!);
      // Names handed to readers of the environment (cluster's integer('CLUSTER_INSTANCES', ...), ConfigError('X', ...), backtest's flags).
      if (/process\.env|ProcessEnv|loadConfig\(|ConfigError\(/.test(source)) for (const match of source.matchAll(/['"]([A-Z][A-Z0-9]*_[A-Z0-9_]+)['"]/g)) read.add(match[1]!);
    }
    expect(read.size).toBeGreaterThan(40);
    expect([...read].filter((name) => !(name in VARIABLES))).toEqual([]);
  });

  it('npm run config shows every variable, where it came from, and never a secret', () => {
    const secrets = { ADMIN_TOKEN: 'admin-token-0123456789', WEBHOOK_SECRET_KEY: 'ab'.repeat(32), WEBHOOK_SECRET_KEY_PREVIOUS: 'cd'.repeat(32), ODDS_FEED_API_KEY: 'feed-key-0123456789', LEDGER_SIGNING_KEY };
    const env = { ...secrets, DATABASE_URL: 'postgres://picks:db-password-42@127.0.0.1/picks', ODDS_FEED_URL: 'https://feed.example/', ODDS_FEED_SPORTS: 'soccer_epl', PORT: '8080' };
    const { lines, refusal } = describeConfig(env);
    const text = lines.join('\n');
    expect(refusal).toBeNull();
    for (const secret of [...Object.values(secrets), 'db-password-42', Buffer.from('ab'.repeat(32), 'hex').toString('base64')]) expect(text).not.toContain(secret);
    for (const name of Object.keys(VARIABLES)) expect(text).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    for (const name of Object.keys(secrets)) expect(text).toMatch(new RegExp(`^  ${name} +env +\\[redacted\\]$`, 'm'));
    expect(text).toMatch(/^ {2}DATABASE_URL +env +postgres:\/\/picks:\[redacted\]@127\.0\.0\.1\/picks$/m);
    expect(text).toMatch(/^ {2}PORT +env +8080$/m);
    expect(text).toMatch(/^ {2}DEMO_SEED +default \(DATABASE_URL set\) +false$/m);
    expect(text).toMatch(/^ {2}GRAPHQL_INTROSPECTION +default +true$/m);
    const demo = describeConfig({}).lines.join('\n');
    expect(demo).toMatch(/^ {2}REFERENCE_BOOKMAKERS +default \(demo feed\) +pinnacle,betfair_ex_eu$/m);
    expect(demo).toMatch(/^ {2}ADMIN_TOKEN +default \(embedded mode: generated under DATA_DIR\) +unset$/m);
    expect(describeConfig({ NODE_ENV: 'production' }).lines.join('\n')).toMatch(/^ {2}GRAPHQL_INTROSPECTION +default \(production\) +false$/m);
  });

  it('npm run config names the refused variables and the line npm start would stop with', () => {
    const { lines, refusal } = describeConfig({ PORT: '70000', ODDS_FEED_URL: 'ftp://feed.example' });
    expect(refusal).toBe('Invalid configuration: PORT must be an integer between 0 and 65535 (got "70000")');
    const text = lines.join('\n');
    expect(text).toMatch(/^ {2}PORT +refused +Invalid configuration: PORT must be an integer between 0 and 65535 \(got "70000"\)$/m);
    expect(text).toMatch(/^ {2}DEMO_FEED +not read +depends on ODDS_FEED_URL, refused$/m);
  });

  it('reads npm run cluster\'s variables with the refusals cluster.ts prints', () => {
    expect(loadClusterConfig({})).toEqual({ instances: 3, basePort: 3001 });
    expect(loadClusterConfig({ CLUSTER_INSTANCES: '32', CLUSTER_BASE_PORT: '65504' })).toEqual({ instances: 32, basePort: 65504 });
    expect(() => loadClusterConfig({ CLUSTER_INSTANCES: '33' })).toThrow('Invalid configuration: CLUSTER_INSTANCES must be an integer between 1 and 32 (got "33")');
    expect(() => loadClusterConfig({ CLUSTER_INSTANCES: '32', CLUSTER_BASE_PORT: '65505' })).toThrow('Invalid configuration: CLUSTER_BASE_PORT must be an integer between 1 and 65504 (got "65505")');
    // loadConfig leaves them to the cluster command.
    expect(() => loadConfig({ CLUSTER_INSTANCES: 'many' })).not.toThrow();
  });
});
