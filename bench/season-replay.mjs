/**
 * `npm run build && node bench/season-replay.mjs`: the 2018/19 Premier League season
 * (test/fixtures/real-season/E0-2018-19.csv, football-data.co.uk) replayed through the real
 * engine, as test/integration/real-season.test.ts replays it, and the engine's picks grouped by
 * their `confidence`: per band, the number of picks and the mean closing-line value
 * (CLV = 100 x (odds / closing odds - 1), the close being Pinnacle's no-vig closing price) with
 * its 95 % interval, mean ± t(0.975, n - 1) x s / sqrt(n).
 *
 * In one process: the runtime and app from dist/ (loadConfig -> createRuntime -> buildApp) on an
 * in-memory embedded PGlite with a manual clock and the poller's timers off; a v4 feed on
 * 127.0.0.1 (a free port) answering what the replay puts there. Per match date (synthetic
 * kickoff 15:00Z): an odds poll at kickoff - 2 h (Pinnacle PSH/PSD/PSA and the soft books
 * Bet365, Bwin, Interwetten, William Hill, BetVictor, every market 30 s old), one at
 * kickoff - 5 min (Pinnacle's closing PSCH/PSCD/PSCA stamped kickoff - 6 min), one at
 * kickoff + 1 s (nothing listed; records the closing line), and a scores poll at
 * kickoff + 2 h 30 min (completed, stamped kickoff + 2 h). Settings: tax 0 at every soft book,
 * PICK_MIN_EDGE 0.02, odds range 1.2-15, review edge 0.25, power devig, horizon 72 h.
 *
 * Bands: 0-49, 50-59, 60-69, 70-79, 80-89, 90-100; an empty band is merged into its neighbour
 * (the one below, or above for the first). A band of one pick has no interval.
 *
 * Output: the markdown table on stdout and bench/season-replay.json.
 * SEASON_REPLAY_CSV=path replays another file of the same format.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildApp } from '../dist/src/app.js';
import { loadConfig } from '../dist/src/config.js';
import { ManualClock } from '../dist/src/domain/clock.js';
import { createRuntime } from '../dist/src/runtime.js';
import { BENCH_DIR, ROOT, log } from './common.mjs';
import { startV4Feed } from './lib/v4-feed.mjs';
import { BENCH_LEDGER_SIGNING_KEY } from './server-common.mjs';

const CSV_FILE = process.env.SEASON_REPLAY_CSV?.trim() || path.join(ROOT, 'test', 'fixtures', 'real-season', 'E0-2018-19.csv');
const RESULTS_FILE = path.join(BENCH_DIR, 'season-replay.json');
const SPORT_KEY = 'soccer_epl';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SOFT_BOOKS = [
  { key: 'bet365', title: 'Bet365', prefix: 'B365' },
  { key: 'bwin', title: 'Bwin', prefix: 'BW' },
  { key: 'interwetten', title: 'Interwetten', prefix: 'IW' },
  { key: 'williamhill', title: 'William Hill', prefix: 'WH' },
  { key: 'betvictor', title: 'BetVictor', prefix: 'VC' },
];
const SETTINGS = {
  BOOKMAKER_TAX_RATES: JSON.stringify(Object.fromEntries(SOFT_BOOKS.map((book) => [book.key, 0]))),
  PICK_MIN_EDGE: '0.02',
  PICK_ODDS_RANGE: '1.2-15',
  PICK_REVIEW_EDGE: '0.25',
  DEVIG_METHOD: 'power',
  PICK_HORIZON_HOURS: '72',
};
const BANDS = [[0, 49], [50, 59], [60, 69], [70, 79], [80, 89], [90, 100]];

// ---------------------------------------------------------------- the season file

/** football-data.co.uk CSV: no quoted cells (checked), one match a line. */
function readSeason(file) {
  const text = readFileSync(file, 'utf8');
  if (text.includes('"')) throw new Error(`${file}: quoted CSV cells are not supported`);
  const lines = text.split(/\r?\n/).filter((line) => line.length > 0);
  const header = lines[0].replace(/^\uFEFF/, '').split(',');
  const cell = (row, name) => row[header.indexOf(name)]?.trim() ?? '';
  const price = (row, name) => {
    const raw = cell(row, name);
    return raw === '' ? undefined : Number(raw);
  };
  const sides = (row, h, d, a) => Object.fromEntries([['H', price(row, h)], ['D', price(row, d)], ['A', price(row, a)]].filter(([, p]) => p !== undefined));
  return lines.slice(1).map((line, index) => {
    const row = line.split(',');
    const [day, month, year] = cell(row, 'Date').split(/[/-]/);
    const date = `${year.length === 2 ? `20${year}` : year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
    return {
      eventId: `e0-season-${index + 1}`,
      date,
      kickoff: new Date(`${date}T15:00:00Z`),
      home: cell(row, 'HomeTeam'),
      away: cell(row, 'AwayTeam'),
      homeGoals: cell(row, 'FTHG'),
      awayGoals: cell(row, 'FTAG'),
      pinnacle: sides(row, 'PSH', 'PSD', 'PSA'),
      pinnacleClose: sides(row, 'PSCH', 'PSCD', 'PSCA'),
      soft: SOFT_BOOKS.map((book) => ({ ...book, prices: sides(row, `${book.prefix}H`, `${book.prefix}D`, `${book.prefix}A`) })).filter((book) => Object.keys(book.prices).length >= 2),
    };
  });
}

// ---------------------------------------------------------------- v4 bodies

const at = (base, ms) => new Date(base.getTime() + ms);
const complete = (prices) => ['H', 'D', 'A'].every((side) => prices[side] !== undefined);

function bookmaker(match, key, title, prices, lastUpdate) {
  const names = { H: match.home, A: match.away, D: 'Draw' };
  const stamp = lastUpdate.toISOString();
  const outcomes = ['H', 'A', 'D'].filter((side) => prices[side] !== undefined).map((side) => ({ name: names[side], price: prices[side] }));
  return { key, title, last_update: stamp, markets: [{ key: 'h2h', last_update: stamp, outcomes }] };
}

function oddsEvent(match, bookmakers) {
  return { id: match.eventId, sport_key: SPORT_KEY, sport_title: 'EPL', commence_time: match.kickoff.toISOString(), home_team: match.home, away_team: match.away, bookmakers };
}

function openingEvent(match, now) {
  const fresh = at(now, -30_000);
  return oddsEvent(match, [
    ...(complete(match.pinnacle) ? [bookmaker(match, 'pinnacle', 'Pinnacle', match.pinnacle, fresh)] : []),
    ...match.soft.map((book) => bookmaker(match, book.key, book.title, book.prices, fresh)),
  ]);
}

function closingEvent(match) {
  return oddsEvent(match, complete(match.pinnacleClose) ? [bookmaker(match, 'pinnacle', 'Pinnacle', match.pinnacleClose, at(match.kickoff, -6 * MINUTE))] : []);
}

function scoreEvent(match) {
  return {
    id: match.eventId,
    sport_key: SPORT_KEY,
    sport_title: 'EPL',
    commence_time: match.kickoff.toISOString(),
    completed: true,
    home_team: match.home,
    away_team: match.away,
    scores: [{ name: match.home, score: match.homeGoals }, { name: match.away, score: match.awayGoals }],
    last_update: at(match.kickoff, 2 * HOUR).toISOString(),
  };
}

/** The local feed (lib/v4-feed.mjs): GET /v4/sports/{key}/{odds|scores} answers the body last set for it. */
async function startFeed() {
  const bodies = new Map();
  const feed = await startV4Feed({ odds: (sport) => bodies.get(`odds:${sport}`) ?? [], scores: (sport) => bodies.get(`scores:${sport}`) ?? [] });
  return { url: feed.url, set: (kind, body) => bodies.set(`${kind}:${SPORT_KEY}`, body), close: feed.close };
}

// ---------------------------------------------------------------- statistics

/** t(0.975, df) for df 1..30 (standard tables, 4 decimals). */
const T975 = [12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.306, 2.2622, 2.2281, 2.201, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.093, 2.086, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423];

/**
 * The 97.5 % quantile of Student's t: the table up to 30 degrees of freedom, beyond it the
 * Cornish-Fisher expansion around the normal quantile z (Abramowitz & Stegun 26.7.5), which
 * agrees with the table's 2.0423 at 30 and is better than 1e-4 above it.
 */
function t975(df) {
  if (!(df >= 1)) return null;
  if (df <= 30) return T975[Math.round(df) - 1];
  const z = 1.959963984540054;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  const g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

function meanInterval(values) {
  const n = values.length;
  if (n === 0) return { n, mean: null, sd: null, low: null, high: null };
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  if (n === 1) return { n, mean, sd: null, low: null, high: null };
  const sd = Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1));
  const half = t975(n - 1) * (sd / Math.sqrt(n));
  return { n, mean, sd, low: mean - half, high: mean + half };
}

/** The bands with picks; an empty band is merged into the one below it (the first into the one above). */
function mergeEmptyBands(bands, picks) {
  let merged = bands.map(([lo, hi]) => ({ lo, hi }));
  const count = (band) => picks.filter((pick) => pick.confidence >= band.lo && pick.confidence <= band.hi).length;
  for (;;) {
    if (merged.length <= 1) return merged;
    const index = merged.findIndex((band) => count(band) === 0);
    if (index < 0) return merged;
    const other = index > 0 ? index - 1 : 1;
    const [a, b] = [Math.min(index, other), Math.max(index, other)];
    merged = [...merged.slice(0, a), { lo: merged[a].lo, hi: merged[b].hi }, ...merged.slice(b + 1)];
  }
}

const fixed = (value, digits = 2) => (value === null ? '–' : value.toFixed(digits));

// ---------------------------------------------------------------- the replay

async function main() {
  const started = performance.now();
  const matches = readSeason(CSV_FILE);
  const groups = [...matches.reduce((map, match) => map.set(match.date, [...(map.get(match.date) ?? []), match]), new Map()).values()]
    .sort((a, b) => a[0].kickoff - b[0].kickoff);
  const feed = await startFeed();
  const adminToken = `season-${randomBytes(16).toString('hex')}`;
  const clock = new ManualClock(at(groups[0][0].kickoff, -3 * HOUR));
  const problems = [];
  const note = (level) => (fields, msg) => problems.push({ level, msg, err: String(fields?.err?.message ?? fields?.err ?? '') });
  const config = loadConfig({
    ADMIN_TOKEN: adminToken,
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LEDGER_SIGNING_KEY: BENCH_LEDGER_SIGNING_KEY,
    DEMO_SEED: 'false',
    LOG_LEVEL: 'silent',
    ODDS_FEED_URL: feed.url,
    ODDS_FEED_API_KEY: 'season-replay',
    ODDS_FEED_SPORTS: SPORT_KEY,
    ...SETTINGS,
  });
  const runtime = await createRuntime(config, {
    adminToken,
    clock,
    database: { kind: 'pglite', dataDir: 'memory://' },
    migrate: true,
    startPoller: false,
    log: { info() {}, warn: note('warn'), error: note('error') },
  });
  const app = await buildApp(runtime, { logger: false });
  const graphql = async (query, variables = {}) => {
    const response = await app.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, payload: { query, variables } });
    const body = response.json();
    if (body.errors) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
    return body.data;
  };
  const poll = async (kind) => {
    if (!(await runtime.poller.pollNow([kind]))) throw new Error('pollNow: the feed lease is held elsewhere');
  };

  try {
    for (const group of groups) {
      const kickoff = group[0].kickoff;
      clock.set(at(kickoff, -2 * HOUR));
      feed.set('odds', group.map((match) => openingEvent(match, clock.now())));
      await poll('odds');
      clock.set(at(kickoff, -5 * MINUTE));
      feed.set('odds', group.map(closingEvent));
      await poll('odds');
      clock.set(at(kickoff, 1_000));
      feed.set('odds', []);
      await poll('odds');
      clock.set(at(kickoff, 2 * HOUR + 30 * MINUTE));
      feed.set('scores', group.map(scoreEvent));
      await poll('scores');
    }

    const picks = [];
    for (let after = null; ;) {
      const page = (await graphql(`query($after: String) { picks(first: 200, after: $after) {
        nodes { homeTeam awayTeam selection odds referenceFairOdds closingOdds confidence status result bookmaker { slug } }
        pageInfo { hasNextPage endCursor } } }`, { after })).picks;
      picks.push(...page.nodes);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    const statusRows = await runtime.orm.em.fork().execute('select status, count(*)::int as n from picks group by status order by status');
    const record = (await graphql('query { trackRecord(daysBack: 365) { overall { roiPct winRate totalSettled clvAvgPct } } }')).trackRecord.overall;

    const withClose = picks.filter((pick) => pick.closingOdds !== null).map((pick) => ({ ...pick, clvPct: 100 * (pick.odds / pick.closingOdds - 1) }));
    const bands = mergeEmptyBands(BANDS, withClose).map((band) => {
      const inBand = withClose.filter((pick) => pick.confidence >= band.lo && pick.confidence <= band.hi);
      const won = inBand.filter((pick) => pick.result === 'WON');
      const profit = inBand.reduce((sum, pick) => sum + (pick.result === 'WON' ? pick.odds - 1 : pick.result === 'LOST' ? -1 : 0), 0);
      return {
        band: `${band.lo}-${band.hi}`,
        ...meanInterval(inBand.map((pick) => pick.clvPct)),
        winRatePct: inBand.length ? (100 * won.length) / inBand.length : null,
        roiPct: inBand.length ? (100 * profit) / inBand.length : null,
      };
    });
    const all = meanInterval(withClose.map((pick) => pick.clvPct));
    const elapsedS = (performance.now() - started) / 1000;

    const table = [
      '| Confidence | Picks | Mean CLV % | 95 % interval | Win rate % | ROI % |',
      '| --- | ---: | ---: | --- | ---: | ---: |',
      ...bands.map((b) => `| ${b.band} | ${b.n} | ${fixed(b.mean)} | ${b.low === null ? '–' : `${fixed(b.low)} to ${fixed(b.high)}`} | ${fixed(b.winRatePct, 1)} | ${fixed(b.roiPct, 1)} |`),
      `| all | ${all.n} | ${fixed(all.mean)} | ${all.low === null ? '–' : `${fixed(all.low)} to ${fixed(all.high)}`} | ${fixed(record.winRate, 1)} | ${fixed(record.roiPct, 1)} |`,
    ].join('\n');
    log(`Season replay: ${path.relative(ROOT, CSV_FILE)}, ${matches.length} matches on ${groups.length} dates, ${picks.length} visible picks ` +
      `(picks by status: ${statusRows.map((row) => `${row.status} ${row.n}`).join(', ')}); track record: ROI ${record.roiPct} %, ` +
      `win rate ${record.winRate} %, mean CLV ${record.clvAvgPct} % over ${record.totalSettled} settled; ${elapsedS.toFixed(1)} s.`);
    log('');
    log(table);
    if (problems.length > 0) log(`\nThe engine logged ${problems.length} warnings or errors, first: ${JSON.stringify(problems.slice(0, 3))}`);

    writeFileSync(RESULTS_FILE, `${JSON.stringify({
      generatedAt: new Date().toISOString(),
      node: process.version,
      csv: path.relative(ROOT, CSV_FILE),
      matches: matches.length,
      dates: groups.length,
      settings: SETTINGS,
      picksByStatus: Object.fromEntries(statusRows.map((row) => [row.status, row.n])),
      trackRecord: record,
      clv: { definition: '100 x (odds / closingOdds - 1); closingOdds = Pinnacle no-vig (power) close', interval: 'mean ± t(0.975, n-1) x s / sqrt(n)' },
      bands,
      all,
      engineProblems: problems.length,
      elapsedSeconds: Math.round(elapsedS * 10) / 10,
      table,
    }, null, 2)}\n`);
    log(`\nwritten: ${path.relative(ROOT, RESULTS_FILE)}`);
  } finally {
    await app.close();
    await runtime.close();
    await feed.close();
  }
}

main().catch((error) => {
  process.stderr.write(`season replay failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
