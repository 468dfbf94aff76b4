/**
 * The value engine benchmark's odds feed (forked by bench/engine-run.mjs; control over IPC).
 *
 * The shared local v4 feed (lib/v4-feed.mjs: 127.0.0.1, a free port) answering `GET /v4/sports/soccer_epl/odds`
 * with The Odds API v4 JSON (snake_case, ISO times, decimal prices): `events` soccer matches,
 * each quoted by `bookmakers` books, the references first (Pinnacle, then Betfair Exchange
 * when `references` is 2), in the markets asked for (`markets`, default all three):
 *   - h2h: home, away, Draw (3 outcomes);
 *   - spreads: the home team at a handicap from -1.5 to +1.5 in quarter steps and the away
 *     team at its opposite (`point` on each outcome), prices near 1.9 / 1.9 (2 outcomes);
 *   - totals: Over / Under a point from 2.25 to 3 in quarter steps, the same `point` on both
 *     (2 outcomes);
 * so a poll of all three carries events x bookmakers x 7 prices. Prices:
 *   - every match has true probabilities per market (h2h: home 20-65 %, draw 22-30 %, away the
 *     rest; spreads: home covers 44-56 %; totals: Over 42-58 %);
 *   - each reference quotes them with its own 2-3 % margin (three decimals), the soft books
 *     with 4-8 % (two decimals, rounded down), so the feed is efficient: no soft price reaches
 *     the engine's 2 % post-tax edge by itself, and price moves are clamped so none drifts
 *     there; the references stay within 2 points of each other's no-vig probabilities (the
 *     engine refuses a selection beyond REFERENCE_MAX_SPREAD, 3 points);
 *   - `valueShare` of the outcomes get one soft book priced at a post-tax edge (5.3 % tax) of
 *     3-12 % over the CONSENSUS fair price, as the engine computes it (each reference devigged
 *     by the power method on its own, the weighted mean with weights 1 and 0.5, renormalised):
 *     the picks of the first poll. That book's other outcomes of the market are shortened so
 *     its market keeps a 3-5 % margin (a book with a negative margin is left out by the
 *     engine), and the market is frozen from then on.
 * A market's `last_update` is the time one of its prices last moved (generate / step /
 * inject), a bookmaker's the latest of its markets': a market nothing moved in keeps its time,
 * as a feed reports a book's market that did not change. With `touchAll` (BENCH_ENGINE_FEED_TIMES=all)
 * every market's and bookmaker's `last_update` is the time of the feed's last change instead,
 * as if every book reconfirmed every market at every change. The bench's polls all come within
 * minutes of `generate`, inside REFERENCE_MAX_AGE_SECONDS (300 s), so references stay fresh
 * either way.
 *
 * IPC commands:
 *   generate { seed, events, bookmakers, references, markets, valueShare, touchAll }  a new set of
 *            matches (new ids: all new)
 *   step     { share }   moves that share of all prices (distinct cells) by one to three ticks
 *   inject   {}          one new edge (5-10 % post-tax) in a market none of whose outcomes had one
 *   requests {}          the odds requests served since the last call: received / sent times
 *   stop     {}
 *
 * Times are wall clock (performance.timeOrigin + performance.now(), as in every bench
 * process); `sentAt` is the response's 'finish' (the last byte handed to the kernel).
 */
import { devig } from '../dist/src/domain/devig.js';
import { serveCommands, wallNow } from './common.mjs';
import { startV4Feed } from './lib/v4-feed.mjs';
import { between, choose, rng } from './lib/prng.mjs';

if (!process.send) {
  process.stderr.write('bench/engine-feed.mjs is started by bench/engine-run.mjs (npm run bench:engine), not directly.\n');
  process.exit(2);
}

export const SPORT_KEY = 'soccer_epl';
const TAX = 0.053;

const BOOKS = [
  ['pinnacle', 'Pinnacle'],
  ['williamhill', 'William Hill'],
  ['unibet_eu', 'Unibet'],
  ['betsson', 'Betsson'],
  ['marathonbet', 'Marathon Bet'],
  ['onexbet', '1xBet'],
  ['betfair_ex_eu', 'Betfair'],
  ['tipico_de', 'Tipico'],
  ['nordicbet', 'Nordic Bet'],
  ['sport888', '888sport'],
];

const CLUBS = [
  'Arsenal', 'Aston Villa', 'Bournemouth', 'Brentford', 'Brighton and Hove Albion', 'Chelsea', 'Crystal Palace', 'Everton',
  'Fulham', 'Ipswich Town', 'Leicester City', 'Liverpool', 'Manchester City', 'Manchester United', 'Newcastle United',
  'Nottingham Forest', 'Southampton', 'Tottenham Hotspur', 'West Ham United', 'Wolverhampton Wanderers', 'Leeds United',
  'Burnley', 'Sheffield United', 'Sunderland', 'Middlesbrough', 'Norwich City', 'Watford', 'Coventry City', 'Hull City',
  'Bristol City', 'Cardiff City', 'Swansea City', 'Stoke City', 'West Bromwich Albion', 'Queens Park Rangers', 'Millwall',
  'Blackburn Rovers', 'Preston North End', 'Luton Town', 'Plymouth Argyle',
];


/** The reference books in order, with their weight in the consensus (engine-run.mjs sets REFERENCE_BOOKMAKERS to match). */
const REFERENCES = [
  ['pinnacle', 1],
  ['betfair_ex_eu', 0.5],
];
/** The books of a feed: the references first, then the others in BOOKS order. */
function booksFor(bookmakers, references) {
  const refs = REFERENCES.slice(0, references).map(([key]) => BOOKS.find(([k]) => k === key));
  return [...refs, ...BOOKS.filter(([key]) => !refs.some(([k]) => k === key))].slice(0, bookmakers);
}
/** Outcomes per market key, in v4 order. */
const MARKET_SIZES = { h2h: 3, spreads: 2, totals: 2 };
/** The references stay this close (no-vig probability, absolute) on every outcome: REFERENCE_MAX_SPREAD is 0.03. */
const REFERENCE_AGREEMENT = 0.02;

const round3 = (x) => Math.round(x * 1000) / 1000;
const floor2 = (x) => Math.floor(x * 100 + 1e-9) / 100;
const quarter = (x) => Math.round(x * 4) / 4 || 0;

let random = rng(1);
let books = [];
let refCount = 1;
/** The markets served: { key, offset (in a book's row of prices), size }. */
let layout = [];
/** Prices per book per event (7 with all three markets). */
let width = 0;
let matches = [];
let changedAt = new Date();
/** BENCH_ENGINE_FEED_TIMES=all: every market's last_update moves at every change. */
let touchAll = false;
/** `${match}:${market}:${outcome}` of every outcome that has (had) an edge: an injected edge always makes a new pick. */
let valued = new Set();
let cells = 0;

/** Uniform in [lo, hi) from the feed's seeded generator. */
const uniform = (lo, hi) => between(random, lo, hi);

/** Each reference's no-vig (power) probabilities of market `mi` of match m, in outcome order. */
function referenceProbabilities(m, mi) {
  const { offset, size } = layout[mi];
  return Array.from({ length: refCount }, (_, r) => devig(Array.from(m.prices.subarray(r * width + offset, r * width + offset + size)), 'power').probabilities);
}

/** The consensus fair price of each outcome of market `mi`, as the engine computes it: weighted mean of the references' power devigs, renormalised. */
function fairPrices(m, mi) {
  const each = referenceProbabilities(m, mi);
  const total = REFERENCES.slice(0, refCount).reduce((sum, [, w]) => sum + w, 0);
  const mean = each[0].map((_, o) => each.reduce((sum, p, r) => sum + REFERENCES[r][1] * p[o], 0) / total);
  const sum = mean.reduce((a, b) => a + b, 0);
  return mean.map((p) => sum / p);
}

/** The largest gap between the references' probabilities of any outcome of market `mi` (0 with one reference). */
function referenceGap(m, mi) {
  if (refCount < 2) return 0;
  const each = referenceProbabilities(m, mi);
  let gap = 0;
  for (let o = 0; o < layout[mi].size; o += 1) {
    const values = each.map((p) => p[o]);
    gap = Math.max(gap, Math.max(...values) - Math.min(...values));
  }
  return gap;
}

/** The outcome's name as the feed lists it, and its line (spreads: its team's point; totals: the point; h2h: null). */
function outcomeOf(m, mi, o) {
  const { key } = layout[mi];
  if (key === 'h2h') return { selection: [m.home, m.away, 'Draw'][o], line: null };
  if (key === 'spreads') return { selection: [m.home, m.away][o], line: o === 0 ? m.spread : -m.spread || 0 };
  return { selection: ['Over', 'Under'][o], line: m.total };
}

/**
 * Sets one soft book's price of outcome o of market mi of match m to a post-tax edge `edge` over
 * the consensus fair price; that book's other outcomes of the market are shortened so the market
 * keeps a 3-5 % margin, and the book's market is frozen. null when the fair price is outside
 * 1.35-12 or every soft book's market there already holds an edge.
 */
function priceAnEdge(m, mi, o, edge) {
  const { offset, size } = layout[mi];
  const fair = fairPrices(m, mi)[o];
  if (!(fair >= 1.35 && fair <= 12)) return null;
  const free = [];
  for (let b = refCount; b < books.length; b += 1) if (!m.frozen[b * layout.length + mi]) free.push(b);
  if (free.length === 0) return null;
  const book = free[Math.floor(random() * free.length)];
  const at = book * width + offset;
  const price = floor2((fair * (1 + edge)) / (1 - TAX));
  m.prices[at + o] = price;
  const target = 1 + uniform(0.03, 0.05);
  let others = 0;
  for (let j = 0; j < size; j += 1) if (j !== o) others += 1 / m.prices[at + j];
  const scale = (target - 1 / price) / others;
  if (scale > 1) for (let j = 0; j < size; j += 1) if (j !== o) m.prices[at + j] = Math.max(1.01, floor2(m.prices[at + j] / scale));
  for (let j = 0; j < size; j += 1) m.base[at + j] = m.prices[at + j];
  m.frozen[book * layout.length + mi] = 1;
  m.updatedMs[book * layout.length + mi] = Date.now();
  return { book, price, fair };
}

function generate({ seed, events, bookmakers, references = 1, markets = ['h2h'], valueShare, touchAll: everyMarket = false }) {
  random = rng(seed);
  touchAll = everyMarket;
  refCount = references;
  books = booksFor(bookmakers, references);
  if (books.length <= refCount) throw new Error('the feed needs at least one soft book besides the references');
  layout = [];
  width = 0;
  for (const key of ['h2h', 'spreads', 'totals']) {
    if (!markets.includes(key)) continue;
    layout.push({ key, offset: width, size: MARKET_SIZES[key] });
    width += MARKET_SIZES[key];
  }
  changedAt = new Date();
  valued = new Set();
  const start = Math.ceil(Date.now() / 900_000) * 900_000;
  matches = [];
  for (let i = 0; i < events; i += 1) {
    const home = choose(random, CLUBS);
    let away = choose(random, CLUBS);
    while (away === home) away = choose(random, CLUBS);
    const pHome = uniform(0.2, 0.65);
    const pDraw = uniform(0.22, 0.3);
    const pAway = Math.max(0.08, 1 - pHome - pDraw);
    const total = pHome + pDraw + pAway;
    // The stronger side gives the goals: about a goal and a half at the extremes.
    const spread = Math.max(-1.5, Math.min(1.5, quarter(((pAway - pHome) / total) * 3)));
    const point = 2.25 + Math.floor(random() * 4) * 0.25;
    const pCover = uniform(0.44, 0.56);
    const pOver = uniform(0.42, 0.58);
    // v4 order: h2h home, away, Draw; spreads home, away; totals Over, Under.
    const truth = { h2h: [pHome / total, pAway / total, pDraw / total], spreads: [pCover, 1 - pCover], totals: [pOver, 1 - pOver] };
    const prices = new Float64Array(books.length * width);
    for (let b = 0; b < books.length; b += 1) {
      const reference = b < refCount;
      const margin = reference ? uniform(0.02, 0.03) : uniform(0.04, 0.08);
      for (const { key, offset, size } of layout) {
        for (let o = 0; o < size; o += 1) {
          const fairPrice = 1 / (truth[key][o] * (1 + margin));
          prices[b * width + offset + o] = reference ? round3(fairPrice) : Math.max(1.01, floor2(fairPrice));
        }
      }
    }
    matches.push({
      id: Array.from({ length: 4 }, () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0')).join(''),
      home,
      away,
      spread,
      total: point,
      // Kickoffs spread over the next 1 to 70 hours (inside the engine's 72 h horizon), on the quarter hour.
      commence: new Date(start + 3_600_000 + Math.floor((i / events) * 69 * 4) * 900_000).toISOString(),
      prices,
      base: Float64Array.from(prices),
      // Per (book, market): 1 once the book's market holds an edge (it no longer moves).
      frozen: new Uint8Array(books.length * layout.length),
      // Per (book, market): when one of its prices last moved (its last_update).
      updatedMs: new Float64Array(books.length * layout.length).fill(changedAt.getTime()),
    });
  }
  cells = events * books.length * width;
  const wanted = Math.round(valueShare * events * width);
  let made = 0;
  for (let tries = 0; made < wanted && tries < wanted * 20; tries += 1) {
    const i = Math.floor(random() * events);
    const mi = Math.floor(random() * layout.length);
    const o = Math.floor(random() * layout[mi].size);
    if (valued.has(`${i}:${mi}:${o}`)) continue;
    if (priceAnEdge(matches[i], mi, o, uniform(0.03, 0.12))) {
      valued.add(`${i}:${mi}:${o}`);
      made += 1;
    }
  }
  prepare();
  return { events, bookmakers: books.length, references: refCount, markets: layout.map((x) => x.key), pricesPerEvent: books.length * width, prices: cells, valueOutcomes: made };
}

/**
 * Moves `share` of all prices, each a distinct cell, by one to three ticks up or down, so
 * exactly that many prices differ from the previous answer. References stay within 2 % of their
 * first quote and within 2 points of each other's no-vig probabilities; soft books within
 * -10 % / +3 % of theirs, and a soft market holding an edge does not move: no edge appears or
 * vanishes by drift, and the references never disagree.
 */
function step({ share }) {
  const nowMs = Date.now();
  const count = Math.round(share * cells);
  const picked = new Set();
  let moved = 0;
  for (let tries = 0; moved < count && tries < count * 20; tries += 1) {
    const cell = Math.floor(random() * cells);
    if (picked.has(cell)) continue;
    const m = matches[Math.floor(cell / (books.length * width))];
    const k = cell % (books.length * width);
    const b = Math.floor(k / width);
    const within = k % width;
    const mi = layout.findIndex((x) => within >= x.offset && within < x.offset + x.size);
    if (m.frozen[b * layout.length + mi]) continue;
    picked.add(cell);
    const reference = b < refCount;
    const tick = reference ? 0.001 : 0.01;
    const [lo, hi] = reference ? [m.base[k] * 0.98, m.base[k] * 1.02] : [m.base[k] * 0.9, m.base[k] * 1.03];
    const ticks = (1 + Math.floor(random() * 3)) * (random() < 0.5 ? -1 : 1) * Math.max(1, Math.round((m.prices[k] * 0.004) / tick));
    let next = Math.round((m.prices[k] + ticks * tick) * 1000) / 1000;
    if (next < lo || next > hi || next <= 1.01) next = Math.round((m.prices[k] - ticks * tick) * 1000) / 1000;
    if (next < lo || next > hi || next <= 1.01 || next === m.prices[k]) continue;
    const previous = m.prices[k];
    m.prices[k] = next;
    if (reference && referenceGap(m, mi) > REFERENCE_AGREEMENT) {
      m.prices[k] = previous;
      continue;
    }
    moved += 1;
    m.updatedMs[b * layout.length + mi] = nowMs;
  }
  changedAt = new Date(nowMs);
  prepare();
  return { moved, share: moved / cells };
}

/** One new edge: a soft book prices an outcome that never had one at 5-10 % post-tax over the consensus fair price. */
function inject() {
  for (let tries = 0; tries < 10_000; tries += 1) {
    const i = Math.floor(random() * matches.length);
    const mi = Math.floor(random() * layout.length);
    const o = Math.floor(random() * layout[mi].size);
    // A market with an edge on any side already: a second side would be held for review
    // (opposite_side), not published, and the bench measures published picks.
    if (Array.from({ length: layout[mi].size }, (_, x) => `${i}:${mi}:${x}`).some((key) => valued.has(key))) continue;
    const m = matches[i];
    const made = priceAnEdge(m, mi, o, uniform(0.05, 0.1));
    if (!made) continue;
    valued.add(`${i}:${mi}:${o}`);
    changedAt = new Date();
    prepare();
    return { eventId: m.id, market: layout[mi].key, ...outcomeOf(m, mi, o), bookmaker: books[made.book][0], price: made.price, fair: made.fair };
  }
  throw new Error('no outcome left for a new edge');
}

/** When book b's market mi of match m last changed, as the feed reports it. */
function marketTime(m, b, mi) {
  return touchAll ? changedAt.getTime() : m.updatedMs[b * layout.length + mi];
}

/** One book's v4 market `mi` of match m. */
function marketJson(m, b, mi) {
  const { key, offset, size } = layout[mi];
  const outcomes = [];
  for (let o = 0; o < size; o += 1) {
    const { selection, line } = outcomeOf(m, mi, o);
    const price = m.prices[b * width + offset + o];
    outcomes.push(line === null ? { name: selection, price } : { name: selection, price, point: line });
  }
  return { key, last_update: new Date(marketTime(m, b, mi)).toISOString(), outcomes };
}

/**
 * The v4 body, rendered when the market changes, before the command that changed it answers
 * (a real feed serves a prepared answer too): a poll's fetch then measures the transfer and the
 * server's parse, not this process's JSON.stringify (30-100 ms for 2.4 MiB on the bench
 * machine, when it was rendered on the request).
 */
let body = null;
function prepare() {
  body = Buffer.from(
    JSON.stringify(
      matches.map((m) => ({
        id: m.id,
        sport_key: SPORT_KEY,
        sport_title: 'EPL',
        commence_time: m.commence,
        home_team: m.home,
        away_team: m.away,
        bookmakers: books.map(([key, title], b) => ({
          key,
          title,
          last_update: new Date(Math.max(...layout.map((_, mi) => marketTime(m, b, mi)))).toISOString(),
          markets: layout.map((_, mi) => marketJson(m, b, mi)),
        })),
      })),
    ),
  );
}
prepare();

let served = [];
const feed = await startV4Feed({
  sports: [SPORT_KEY],
  odds: () => body,
  scores: () => '[]',
  onServe({ kind, receivedAt, bytes, res }) {
    if (kind !== 'odds') return;
    const record = { receivedAt, sentAt: null, bytes };
    served.push(record);
    res.on('finish', () => {
      record.sentAt = wallNow();
    });
  },
});

serveCommands({
  generate,
  step,
  inject,
  requests() {
    const out = served;
    served = [];
    return out;
  },
  stop() {
    setImmediate(() => feed.close().then(() => process.exit(0)));
    return true;
  },
});

process.send({ type: 'ready', port: feed.port, url: feed.url });
