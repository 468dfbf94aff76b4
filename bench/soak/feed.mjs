/**
 * The soak's odds: a market that keeps changing, served by the shared local v4 feed
 * (bench/lib/v4-feed.mjs). New matches with one mispriced outcome appear every 6-14 s (some
 * priced too good to be true, held for review), second edges and better prices on known
 * outcomes, matches that kick off within minutes and are reported finished a minute later.
 * Every draw comes from the generator it is given, so a seed replays the same market.
 */
import { between, choose } from '../lib/prng.mjs';
import { startV4Feed } from '../lib/v4-feed.mjs';
import { SPORT_KEY, TAX, floor2, round3, settings } from './settings.mjs';

/**
 * Matches of soccer_epl priced by pinnacle (the reference: power prices of known probabilities,
 * so its no-vig price is known) and two soft books. A soft book's market either carries a margin
 * on every outcome, or prices one outcome at a post-tax edge over the fair price and the others
 * with enough margin that the book's implied probabilities still sum above 1 (the engine drops a
 * book with a negative margin).
 */
export async function startFeed(r) {
  const BOOKS = [['pinnacle', 'Pinnacle'], ['williamhill', 'William Hill'], ['unibet_eu', 'Unibet']];
  const K = 1.04;
  const matches = [];
  const stats = { matches: 0, valueOffers: 0, reviewOffers: 0, betterPrices: 0, oddsRequests: 0, scoresRequests: 0 };
  let open = false;
  let frozenAt = null;
  let nextNewAt = 0;
  let nextChangeAt = 0;
  let count = 0;
  const now = () => frozenAt ?? Date.now();

  function bookPrices(m, b) {
    const book = m.books[b];
    if (book.value === null) return m.p.map((p) => Math.max(1.01, floor2(1 / (p * 1.06))));
    const v = book.value;
    const priceV = floor2(((1 / m.p[v]) * (1 + book.edge)) / (1 - TAX));
    const scale = (1.06 - 1 / priceV) / (1 - m.p[v]);
    return m.p.map((p, o) => (o === v ? priceV : Math.max(1.01, floor2(1 / (p * scale)))));
  }

  function offerValue(m, b) {
    const candidates = [0, 1, 2].filter((o) => m.p[o] >= 0.15 && !m.books.some((book) => book && book.value === o));
    if (candidates.length === 0) return false;
    const review = r() < 0.1;
    m.books[b] = { value: choose(r, candidates), edge: review ? between(r, 0.3, 0.4) : between(r, 0.04, 0.12) };
    m.changedAt = Date.now();
    stats.valueOffers += 1;
    if (review) stats.reviewOffers += 1;
    return true;
  }

  function newMatch() {
    count += 1;
    const pHome = between(r, 0.25, 0.6);
    const pDraw = between(r, 0.22, 0.3);
    const pAway = 1 - pHome - pDraw;
    const soon = r() < 0.35;
    const commence = Date.now() + (soon ? between(r, 150, 360) * 1000 : between(r, 2, 40) * 3_600_000);
    const m = {
      id: `soak${settings.seed.toString(16)}e${count}`,
      home: `Home ${count} FC`,
      away: `Away ${count} FC`,
      // v4 order: home, away, Draw.
      p: [pHome, Math.max(0.1, pAway), pDraw],
      commence: Math.floor(commence / 1000) * 1000,
      books: [null, { value: null }, { value: null }],
      final: [Math.floor(r() * 4), Math.floor(r() * 4)],
      changedAt: Date.now(),
    };
    const sum = m.p.reduce((a, b) => a + b, 0);
    m.p = m.p.map((p) => p / sum);
    m.reference = m.p.map((p) => round3(1 / p ** (1 / K)));
    offerValue(m, 1);
    matches.push(m);
    stats.matches += 1;
  }

  /** Every second: a new match every 6-14 s, and now and then a second edge or a better price. */
  function tick() {
    if (!open || frozenAt !== null) return;
    const t = Date.now();
    if (t >= nextNewAt) {
      newMatch();
      nextNewAt = t + between(r, 6_000, 14_000);
    }
    if (t >= nextChangeAt) {
      nextChangeAt = t + between(r, 3_000, 8_000);
      const upcoming = matches.filter((m) => m.commence > t + 60_000);
      if (upcoming.length === 0) return;
      const m = choose(r, upcoming);
      if (r() < 0.5) {
        if (m.books[2].value === null) offerValue(m, 2);
      } else if (m.books[1].value !== null) {
        // A better price for an outcome that already has a pick: no second pick may follow.
        m.books[1].edge += 0.01;
        m.changedAt = t;
        stats.betterPrices += 1;
      }
    }
  }
  const timer = setInterval(tick, 1_000);

  function oddsBody() {
    const t = now();
    const refreshed = Math.floor(t / 30_000) * 30_000;
    return matches
      .filter((m) => m.commence > t)
      .map((m) => {
        const at = new Date(Math.min(t, Math.max(m.changedAt, refreshed))).toISOString();
        return {
          id: m.id,
          sport_key: SPORT_KEY,
          sport_title: 'EPL',
          commence_time: new Date(m.commence).toISOString(),
          home_team: m.home,
          away_team: m.away,
          bookmakers: BOOKS.map(([key, title], b) => {
            const prices = b === 0 ? m.reference : bookPrices(m, b);
            return {
              key,
              title,
              last_update: at,
              markets: [{ key: 'h2h', last_update: at, outcomes: [{ name: m.home, price: prices[0] }, { name: m.away, price: prices[1] }, { name: 'Draw', price: prices[2] }] }],
            };
          }),
        };
      });
  }

  function scoresBody() {
    const t = now();
    return matches
      .filter((m) => m.commence <= t)
      .map((m) => {
        const completed = t >= m.commence + 60_000;
        return {
          id: m.id,
          sport_key: SPORT_KEY,
          sport_title: 'EPL',
          commence_time: new Date(m.commence).toISOString(),
          completed,
          home_team: m.home,
          away_team: m.away,
          scores: completed ? [{ name: m.home, score: String(m.final[0]) }, { name: m.away, score: String(m.final[1]) }] : null,
          last_update: completed ? new Date(m.commence + 60_000).toISOString() : null,
        };
      });
  }

  const feed = await startV4Feed({
    sports: [SPORT_KEY],
    odds() {
      stats.oddsRequests += 1;
      return open ? oddsBody() : [];
    },
    scores() {
      stats.scoresRequests += 1;
      return open ? scoresBody() : [];
    },
  });
  return {
    url: feed.url,
    stats,
    open() {
      open = true;
      nextNewAt = Date.now();
      nextChangeAt = Date.now() + 5_000;
    },
    /** No more changes: odds and scores stay as they are now. */
    freeze() {
      frozenAt = Date.now();
    },
    close() {
      clearInterval(timer);
      return feed.close();
    },
  };
}
