/**
 * The start banner: where the service listens, what data it found and, on a developer's
 * machine, the credentials to try it with. In production (NODE_ENV=production) it names where
 * the generated admin token, demo keys and demo account's password are kept instead of printing
 * them: logs are often shipped and kept. The example is a REST call with a demo key (the demo
 * account's, so its usage shows on the dashboard). A test-only setting left on is warned about.
 */
import path from 'node:path';
import type { Config } from '../config.js';
import { ADMIN_TOKEN_FILE, DEMO_ACCOUNT_FILE, DEMO_KEYS_FILE, type DemoAccount, type DemoKeys } from '../embedded.js';
import type { FeedBudgetView } from '../services/value-engine/credit-budget.js';

/**
 * WEBHOOK_HOST_OVERRIDES points webhook host names at loopback addresses for tests; a service
 * started with it delivers those hosts' webhooks to this machine. Null when it is not set.
 */
export function hostOverridesWarning(config: Pick<Config, 'webhookHostOverrides'>): string | null {
  if (config.webhookHostOverrides.size === 0) return null;
  const names = [...config.webhookHostOverrides.keys()].join(', ');
  return `WEBHOOK_HOST_OVERRIDES is a test-only setting: webhooks for ${names} are delivered to loopback addresses. Unset it outside tests.`;
}

/** What an embedded start found in DATA_DIR: a demo seeded now, or data reused from an earlier start. */
export interface DataDirState {
  kind: 'seeded' | 'reused';
  /** When the database was set up (its deployment row). */
  createdAt: Date;
  picks: number;
}

/** The demo sign-in as the banner shows it: with the tiers of the demo keys the account owns. */
export interface DemoSignIn extends DemoAccount {
  keyTiers?: readonly string[];
}

const count = new Intl.NumberFormat('en-US');

/** 2026-11-27 10:12 UTC: the minute is enough to recognise a data directory. */
function utcMinute(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * A restart says the data were reused, and since when they exist, so a reader is not surprised
 * by last week's picks (or by a data directory they forgot); a first start says it seeded.
 */
export function dataLine(config: Pick<Config, 'dataDir' | 'demoSeed'>, state: DataDirState): string {
  const picks = `${count.format(state.picks)} pick${state.picks === 1 ? '' : 's'}`;
  if (state.kind === 'seeded') return `  data: a new demo seeded in ${config.dataDir} (${picks})`;
  const what = config.demoSeed ? 'the demo data' : 'the data';
  const fresh = config.demoSeed ? '; another DATA_DIR starts a new demo' : '';
  return `  data: reusing ${what} in ${config.dataDir} (created ${utcMinute(state.createdAt)}, ${picks})${fresh}`;
}

/** Where the value engine's odds come from (never the feed's URL query: it carries the apiKey). */
function valueEngineLine(config: Config): string {
  const engine = config.valueEngine;
  if (engine.feed && engine.credits) return `polling ${new URL(engine.feed.url).origin} by a monthly credit plan that follows the kickoffs (${engine.sportKeys.join(', ')})`;
  if (engine.feed) return `polling ${new URL(engine.feed.url).origin} every ${engine.oddsPollSeconds} s (${engine.sportKeys.join(', ')})`;
  if (engine.demoFeed) return `simulated demo feed every ${engine.oddsPollSeconds} s (DEMO_FEED): new picks within a minute or two`;
  return 'no odds feed (ODDS_FEED_URL unset): picks come from publishPick and ingestOdds';
}

const shortTime = (at: Date | null, now: Date): string => {
  if (!at) return 'none planned';
  const text = utcMinute(at);
  // Today's polls by time alone.
  return text.slice(0, 10) === utcMinute(now).slice(0, 10) ? text.slice(11) : text;
};

/** The credit budget's lines (docs/VALUE_ENGINE.md, "Feed credits"): the month so far, the projection, the next polls. */
export function creditLines(view: FeedBudgetView, now: Date): string[] {
  const source = view.source === 'feed' ? "the feed's headers" : 'counted by the formula';
  const head = `  feed credits: ${count.format(view.monthlyCredits)} a month (${count.format(view.reserveCredits)} kept for closing lines), ${view.oddsCreditsPerPoll} a poll; ${view.month}: used ${count.format(view.usedCredits)} (${source}), ${count.format(view.remainingCredits)} left, month-end projection ${count.format(view.projectedMonthCredits)}`;
  if (view.stopped) return [head, `    polls STOPPED since ${utcMinute(view.stopped.at)}: the feed reports no credits left; they resume next month, with another ODDS_FEED_MONTHLY_CREDITS or when the feed reports credits again`];
  if (view.scheduleReadAt === null) return [head, '    next polls: planned once the events list is read (it could not be yet)'];
  const next = view.nextPolls.map((poll) => `${poll.sportKey} odds ${shortTime(poll.odds, now)}${poll.oddsPurpose ? ` (${poll.oddsPurpose})` : ''}${poll.scores ? `, scores ${shortTime(poll.scores, now)}` : ''}`);
  return [head, `    next polls (UTC): ${next.join('; ')}`];
}

export function startBanner(
  config: Config,
  url: string,
  adminToken: string,
  demoKeys: DemoKeys | null,
  demoAccount: DemoSignIn | null = null,
  data: DataDirState | null = null,
  credits: { view: FeedBudgetView; now: Date } | null = null,
): string {
  const lines = [
    '',
    `Picks service listening on ${url}`,
    `  database: ${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`}`,
    ...(data && !config.databaseUrl ? [dataLine(config, data)] : []),
    `  limits/events: ${config.redisUrl ? 'Redis' : 'in-memory'}`,
    `  GraphQL: ${url}/graphql`,
    `  value engine: ${valueEngineLine(config)}`,
    ...(credits ? creditLines(credits.view, credits.now) : []),
  ];
  const adminTokenFile = path.join(config.dataDir, ADMIN_TOKEN_FILE);
  const demoKeysFile = path.join(config.dataDir, DEMO_KEYS_FILE);
  const demoAccountFile = path.join(config.dataDir, DEMO_ACCOUNT_FILE);
  lines.push(`  dashboard: ${url}/dashboard/`);
  if (config.production) {
    if (config.adminToken === null) lines.push(`  admin token: kept in ${adminTokenFile} (not printed in production)`);
    // Only embedded mode keeps them in a file; on PostgreSQL they are shown nowhere, so say so.
    if (demoKeys) lines.push(config.databaseUrl ? '  demo API keys: seeded, not kept and not printed in production (mint keys with createApiKey)' : `  demo API keys: kept in ${demoKeysFile} (not printed in production)`);
    if (demoAccount) lines.push(`  demo dashboard sign-in: ${demoAccount.email}, password kept in ${demoAccountFile} (not printed in production)`);
  } else {
    if (config.adminToken === null) lines.push(`  admin token (kept in ${adminTokenFile}): ${adminToken}`);
    if (demoAccount) lines.push(`  demo dashboard sign-in (kept in ${demoAccountFile}): ${demoAccount.email} / ${demoAccount.password}   ${url}/dashboard/login`);
    if (demoKeys) {
      const owned = new Set(demoAccount?.keyTiers ?? []);
      // An account's keys carry its tier: the demo account owns the key of its tier, the others belong to no account.
      lines.push(owned.size > 0 ? `  demo API keys (${demoAccount!.email} owns the ${[...owned].join(', ')} one; the others belong to no account):` : '  demo API keys:');
      for (const [tier, key] of Object.entries(demoKeys)) lines.push(`    ${tier.padEnd(10)} ${key}${owned.has(tier) ? '   on the dashboard, with its usage and webhooks' : ''}`);
      // The key the dashboard shows, when there is one: the reader sees these calls counted there.
      const ownedTier = Object.keys(demoKeys).find((tier) => owned.has(tier));
      const sample = (ownedTier && demoKeys[ownedTier]) ?? demoKeys.growth ?? Object.values(demoKeys)[0];
      // The customer API with a key: what a customer would try first.
      if (sample) {
        lines.push(
          '',
          '  try:',
          `    curl -s -H 'Authorization: Bearer ${sample}' '${url}/api/v1/picks?limit=3'`,
          `    curl -s -H 'Authorization: Bearer ${sample}' '${url}/api/v1/usage'`,
        );
        if (config.valueEngine.demoFeed && demoKeys.enterprise) {
          lines.push(`    curl -sN -H 'Authorization: Bearer ${demoKeys.enterprise}' '${url}/api/v1/picks/stream'   # engine picks as they are found, and when their price moves`);
        }
      }
    }
  }
  const hostOverrides = hostOverridesWarning(config);
  if (hostOverrides) lines.push('', `  warning: ${hostOverrides}`);
  lines.push(`  API reference: ${url}/docs/`);
  lines.push('');
  return `${lines.join('\n')}\n`;
}
