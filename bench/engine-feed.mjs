/**
 * The value engine benchmark's odds feed (forked by bench/engine-run.mjs; control over IPC).
 *
 * A node:http server on 127.0.0.1 and a free port answering `GET /v4/sports/soccer_epl/odds`
 * with The Odds API v4 JSON (snake_case, ISO times, decimal prices): `events` soccer matches,
 * each with an h2h market (home, away, Draw) at `bookmakers` books, Pinnacle first. Prices:
 *   - every match has true probabilities (home 20-65 %, draw 22-30 %, away the rest);
 *   - Pinnacle quotes them with a 2-3 % margin (three decimals), the soft books with 4-8 %
 *     (two decimals, rounded down), so the feed is efficient: no soft price reaches the
 *     engine's 2 % post-tax edge by itself, and price moves are clamped so none drifts there;
 *   - `valueShare` of the outcomes get one soft book priced at a post-tax edge (5.3 % tax) of
 *     3-12 % over Pinnacle's no-vig (power) price: the picks of the first poll.
 * Every bookmaker's `last_update` is the time of the feed's last change (generate / step /
 * inject), so references are always fresh.
 *
 * IPC commands:
 *   generate { seed, events, bookmakers, valueShare }  a new set of matches (new ids: all new)
 *   step     { share }   moves that share of all prices (distinct cells) by one to three ticks
 *   inject   {}          one new edge (5-10 % post-tax) on an outcome that never had one
 *   requests {}          the odds requests served since the last call: received / sent times
 *   stop     {}
 *
 * Times are wall clock (performance.timeOrigin + performance.now(), as in every bench
 * process); `sentAt` is the response's 'finish' (the last byte handed to the kernel).
 */
import { createServer } from 'node:http';
import { devig } from '../dist/src/domain/devig.js';
import { HOST, rng, serveCommands, wallNow } from './common.mjs';

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


const round3 = (x) => Math.round(x * 1000) / 1000;
const floor2 = (x) => Math.floor(x * 100 + 1e-9) / 100;

let random = rng(1);
let books = [];
let matches = [];
let changedAt = new Date();
/** `${match index}:${outcome}` of every outcome that has (had) an edge: an injected edge always makes a new pick. */
let valued = new Set();
let cells = 0;

const between = (lo, hi) => lo + random() * (hi - lo);

/** Pinnacle's no-vig (power) fair price of each outcome of match m, as the engine computes it. */
function fairPrices(m) {
  return devig(Array.from(m.prices.subarray(0, 3)), 'power').fairPrices;
}

/** Sets one soft book's price of outcome o of match m to a post-tax edge `edge` over the fair price. */
function priceAnEdge(m, o, edge) {
  const fair = fairPrices(m)[o];
  if (!(fair >= 1.35 && fair <= 12)) return null;
  const book = 1 + Math.floor(random() * (books.length - 1));
  const price = floor2((fair * (1 + edge)) / (1 - TAX));
  m.prices[book * 3 + o] = price;
  m.base[book * 3 + o] = price;
  m.frozen[book * 3 + o] = 1;
  return { book, price, fair };
}

function generate({ seed, events, bookmakers, valueShare }) {
  random = rng(seed);
  books = BOOKS.slice(0, bookmakers);
  changedAt = new Date();
  valued = new Set();
  const start = Math.ceil(Date.now() / 900_000) * 900_000;
  matches = [];
  for (let i = 0; i < events; i += 1) {
    const home = CLUBS[Math.floor(random() * CLUBS.length)];
    let away = CLUBS[Math.floor(random() * CLUBS.length)];
    while (away === home) away = CLUBS[Math.floor(random() * CLUBS.length)];
    const pHome = between(0.2, 0.65);
    const pDraw = between(0.22, 0.3);
    const pAway = Math.max(0.08, 1 - pHome - pDraw);
    const total = pHome + pDraw + pAway;
    // v4 order: home, away, Draw.
    const truth = [pHome / total, pAway / total, pDraw / total];
    const prices = new Float64Array(books.length * 3);
    const pinMargin = between(0.02, 0.03);
    for (let o = 0; o < 3; o += 1) prices[o] = round3(1 / (truth[o] * (1 + pinMargin)));
    for (let b = 1; b < books.length; b += 1) {
      const margin = between(0.04, 0.08);
      for (let o = 0; o < 3; o += 1) prices[b * 3 + o] = Math.max(1.01, floor2(1 / (truth[o] * (1 + margin))));
    }
    matches.push({
      id: Array.from({ length: 4 }, () => Math.floor(random() * 2 ** 32).toString(16).padStart(8, '0')).join(''),
      home,
      away,
      // Kickoffs spread over the next 1 to 70 hours (inside the engine's 72 h horizon), on the quarter hour.
      commence: new Date(start + 3_600_000 + Math.floor((i / events) * 69 * 4) * 900_000).toISOString(),
      prices,
      base: Float64Array.from(prices),
      frozen: new Uint8Array(books.length * 3),
    });
  }
  cells = events * books.length * 3;
  const wanted = Math.round(valueShare * events * 3);
  let made = 0;
  for (let tries = 0; made < wanted && tries < wanted * 20; tries += 1) {
    const i = Math.floor(random() * events);
    const o = Math.floor(random() * 3);
    if (valued.has(`${i}:${o}`)) continue;
    if (priceAnEdge(matches[i], o, between(0.03, 0.12))) {
      valued.add(`${i}:${o}`);
      made += 1;
    }
  }
  body = null;
  return { events, bookmakers: books.length, prices: cells, valueOutcomes: made };
}

/**
 * Moves `share` of all prices, each a distinct cell, by one to three ticks up or down, so
 * exactly that many prices differ from the previous answer. Pinnacle stays within 2 % of its
 * first quote and soft books within -10 % / +3 % of theirs: no edge appears by drift.
 */
function step({ share }) {
  const count = Math.round(share * cells);
  const picked = new Set();
  let moved = 0;
  for (let tries = 0; moved < count && tries < count * 20; tries += 1) {
    const cell = Math.floor(random() * cells);
    if (picked.has(cell)) continue;
    const m = matches[Math.floor(cell / (books.length * 3))];
    const k = cell % (books.length * 3);
    if (m.frozen[k]) continue;
    picked.add(cell);
    const pinnacle = k < 3;
    const tick = pinnacle ? 0.001 : 0.01;
    const [lo, hi] = pinnacle ? [m.base[k] * 0.98, m.base[k] * 1.02] : [m.base[k] * 0.9, m.base[k] * 1.03];
    const ticks = (1 + Math.floor(random() * 3)) * (random() < 0.5 ? -1 : 1) * Math.max(1, Math.round((m.prices[k] * 0.004) / tick));
    let next = Math.round((m.prices[k] + ticks * tick) * 1000) / 1000;
    if (next < lo || next > hi || next <= 1.01) next = Math.round((m.prices[k] - ticks * tick) * 1000) / 1000;
    if (next < lo || next > hi || next <= 1.01 || next === m.prices[k]) continue;
    m.prices[k] = next;
    moved += 1;
  }
  changedAt = new Date();
  body = null;
  return { moved, share: moved / cells };
}

/** One new edge: a soft book prices an outcome that never had one at 5-10 % post-tax over the fair price. */
function inject() {
  for (let tries = 0; tries < 10_000; tries += 1) {
    const i = Math.floor(random() * matches.length);
    const o = Math.floor(random() * 3);
    if (valued.has(`${i}:${o}`)) continue;
    const m = matches[i];
    const made = priceAnEdge(m, o, between(0.05, 0.1));
    if (!made) continue;
    valued.add(`${i}:${o}`);
    changedAt = new Date();
    body = null;
    return { eventId: m.id, selection: o === 2 ? 'Draw' : o === 0 ? m.home : m.away, bookmaker: books[made.book][0], price: made.price, fair: made.fair };
  }
  throw new Error('no outcome left for a new edge');
}

/** The v4 body, rendered once per change (a real feed serves a prepared answer too). */
let body = null;
function render() {
  if (body) return body;
  const at = changedAt.toISOString();
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
          last_update: at,
          markets: [
            {
              key: 'h2h',
              last_update: at,
              outcomes: [
                { name: m.home, price: m.prices[b * 3] },
                { name: m.away, price: m.prices[b * 3 + 1] },
                { name: 'Draw', price: m.prices[b * 3 + 2] },
              ],
            },
          ],
        })),
      })),
    ),
  );
  return body;
}

let served = [];
const server = createServer((req, res) => {
  const receivedAt = wallNow();
  const url = new URL(req.url ?? '/', `http://${HOST}`);
  if (url.pathname === `/v4/sports/${SPORT_KEY}/scores`) {
    res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    return;
  }
  if (url.pathname !== `/v4/sports/${SPORT_KEY}/odds`) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Unknown sport"}');
    return;
  }
  const payload = render();
  const record = { receivedAt, sentAt: null, bytes: payload.length };
  served.push(record);
  res.on('finish', () => {
    record.sentAt = wallNow();
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': payload.length, 'x-requests-remaining': '19000', 'x-requests-used': '1000' });
  res.end(payload);
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen({ port: 0, host: HOST }, resolve);
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
    setImmediate(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
    return true;
  },
});

process.send({ type: 'ready', port: server.address().port, url: `http://${HOST}:${server.address().port}` });
