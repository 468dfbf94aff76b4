/**
 * Pick availability on real prices (issue 40): the 1X2 (h2h) markets of the first 160 matches of
 * the 2023/24 Premier League (football-data.co.uk, test/fixtures/real-season/E0-2023-24-first-160.csv),
 * served by a local v4 feed on 127.0.0.1 (the engine asked for `h2h` only) and polled by hand on
 * a manual clock, with Pinnacle the one reference and four untaxed soft books (Bwin BW*,
 * Interwetten IW*, William Hill WH*, BetVictor VC*; BOOKMAKER_TAX_RATES 0, so an edge is
 * price x fair probability - 1), per kickoff (every match of a date kicks off at 15:00Z):
 *   (a) kickoff - 60 min: everyone's opening prices (PSH/PSA/PSD, BWH/...), stamped 30 s old;
 *   (b) kickoff - 1 min: everyone's closing prices (PSCH/..., BWCH/...), stamped 30 s old. A book
 *       whose closing cells are blank no longer quotes the match: it is left out of the feed;
 *   (c) kickoff + 1 min: the opening prices again, which would make a moved pick available and
 *       bring the gone one back if anything were still checked after kickoff;
 *   (d) kickoff + 2 h 30 min: the final scores, which settle the picks and fix their figures.
 * A pick published at (a) is, after (b), `available` when its own book's closing price for its
 * selection still beats Pinnacle's closing fair price by PICK_MIN_EDGE, `moved` when it is quoted
 * without that edge, `gone` when that book's closing cells are blank. (b) is also a detection
 * poll: a match without a pick gets one there when its close qualifies (published `available` a
 * minute before kickoff), and another side of a match with a pick is held (opposite_side).
 *
 * Why not Pinnacle power-devigged against all five soft books (bet365 too): the CSV's only blank
 * closing cells are Bwin's, in rows 20 to 29 (rows 104 and 152 lack Bwin at both times), and
 * against the power devig no Bwin price in those rows has any edge (the best, 6.75 on the draw of
 * Arsenal v Fulham, row 22, is at -0.09 %), so no pick could ever be gone. The multiplicative devig
 * leaves the draw more probability (6.75 then has +7.3 %), and bet365 is left out because its
 * 7.00 on that draw would take the pick from Bwin (Interwetten's equal 6.75 loses the tie: Bwin
 * is listed first). With DEVIG_METHOD=multiplicative, PICK_MIN_EDGE 0.02, PICK_ODDS_RANGE 1.2-15
 * and PICK_REVIEW_EDGE 0.25, the CSV gives (asserted below, and printed):
 *   - 20 picks at the opening (Bwin 4, Interwetten 4, William Hill 2, BetVictor 10), none held;
 *     after the close 8 available, 11 moved, 1 gone (Bwin's draw in row 22), none quoted without
 *     a fair price to judge it by (no soft closing market fails the sanity rules);
 *   - 26 more published at the close, and 2 held there as other sides (Fulham at Interwetten 11
 *     in row 22, Bournemouth at BetVictor 6.5 in Brighton v Bournemouth); the largest edge of
 *     any candidate is 12.0 %, so nothing is held as too good;
 *   - the record over the 46: tracked 46, available at 5 and at 30 minutes 100 % (the first check
 *     after an opening pick is 59 minutes later, and a pick published at the close is read at
 *     kickoff), median 1 minute available (26 published at the close, censored at kickoff after 1;
 *     12 left available at the close after 59; 8 still available, censored at kickoff at 60).
 * The same replay with PICK_CONFIRM_POLLS=2 (second describe) publishes a selection only when
 * both the opening and the close find it a candidate, at the close's best offer: 9 picks, all a
 * minute before kickoff. Against PICK_CONFIRM_POLLS=1 (asserted below, and printed): of its 20
 * opening picks, 9 are published 59 minutes later (the 8 still available at the close and one
 * moved at its own book that another book still carries; 1 at the same book and price, 4 at a
 * higher price, 4 lower), and 11 of the 12 that lost their edge by the close (11 moved, 1 gone)
 * are never published; its 26 close picks were first candidates at the close, so none is.
 * Every expectation (picks, held sides, statuses, prices, edges, times, the record) is computed
 * below from the CSV with the rules written out here, sharing no code with the engine.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import type { TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';
import { parseCsv, powerDevig, round4, SOFT_BOOKS } from '../helpers/independent-value.js';
import { startOddsFeedServer, startReplayApp, v4Bookmaker, v4OddsEvent, v4ScoreEvent, type OddsFeedServer, type ReplayLog } from '../helpers/odds-feed-server.js';

const ROWS = parseCsv(readFileSync(new URL('../fixtures/real-season/E0-2023-24-first-160.csv', import.meta.url), 'utf8'));
const SPORT_KEY = 'soccer_epl';
const MIN_EDGE = 0.02;
const REVIEW_EDGE = 0.25;
const ODDS_MIN = 1.2;
const ODDS_MAX = 15;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const OPENING_BEFORE_KICKOFF = 60 * MINUTE;
const CLOSE_BEFORE_KICKOFF = MINUTE;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

const REFERENCE = { key: 'pinnacle', title: 'Pinnacle', open: 'PS', close: 'PSC' } as const;
/** The soft books in feed order (a tie between equal prices goes to the first listed). */
const SOFT = SOFT_BOOKS.filter((book) => book.key !== 'bet365').map((book) => ({ key: book.key, title: book.title, open: book.prefix, close: `${book.prefix}C` }));

/** A book's prices in v4 order (home, away, Draw), or null where its cells are blank. */
type Prices = number[] | null;
interface Match {
  eventId: string;
  kickoff: Date;
  home: string;
  away: string;
  homeGoals: number;
  awayGoals: number;
  names: string[];
  /** Per bookmaker key, before the close and at it. */
  open: Record<string, Prices>;
  close: Record<string, Prices>;
}

const num = (cell: string | undefined): number => {
  if (cell === undefined || cell === '' || !Number.isFinite(Number(cell))) throw new Error(`not a number: ${cell}`);
  return Number(cell);
};
/** The CSV blanks a book whole (all three cells) or not at all: a partly quoted market would need rules this test does not write out. */
const pricesOf = (row: Record<string, string>, prefix: string): Prices => {
  const cells = ['H', 'A', 'D'].map((side) => row[`${prefix}${side}`]);
  if (cells.every((cell) => cell === '')) return null;
  return cells.map(num);
};

const MATCHES: Match[] = ROWS.map((row, index) => {
  const [day, month, year] = row.Date!.split('-');
  const books = [REFERENCE, ...SOFT];
  return {
    eventId: `e0-2324-${index + 1}`,
    kickoff: new Date(`${year}-${month}-${day}T15:00:00Z`),
    home: row.HomeTeam!,
    away: row.AwayTeam!,
    homeGoals: num(row.FTHG),
    awayGoals: num(row.FTAG),
    names: [row.HomeTeam!, row.AwayTeam!, 'Draw'],
    open: Object.fromEntries(books.map((book) => [book.key, pricesOf(row, book.open)])),
    close: Object.fromEntries(books.map((book) => [book.key, pricesOf(row, book.close)])),
  };
});

const GROUPS = (() => {
  const byKickoff = new Map<number, Match[]>();
  for (const match of MATCHES) byKickoff.set(match.kickoff.getTime(), [...(byKickoff.get(match.kickoff.getTime()) ?? []), match]);
  return [...byKickoff.entries()].sort(([a], [b]) => a - b).map(([kickoff, matches]) => ({ kickoff: new Date(kickoff), matches }));
})();

// --- The rules, written out independently of the engine -------------------------------------

const booksum = (prices: number[]) => prices.reduce((sum, price) => sum + 1 / price, 0);
/** Multiplicative devig: each implied probability divided by the booksum (the devig accepts a booksum of 1 .. 1.25). */
function fairProbabilities(reference: Prices): number[] {
  if (reference === null || booksum(reference) < 1 - 1e-9 || booksum(reference) > 1.25) throw new Error('every Pinnacle market of the CSV is devigged');
  return reference.map((price) => 1 / price / booksum(reference));
}
/** A soft market is compared only when no price is above 3 x the reference's and its booksum is not below 1. */
const softUsable = (soft: number[], reference: number[]) => soft.every((price, i) => price <= 3 * reference[i]!) && booksum(soft) >= 1 - 1e-9;

interface Candidate {
  selection: number;
  bookmaker: string;
  price: number;
  edge: number;
  /**
   * The edge a pick published on this offer shows as its first check: recomputed from the prices
   * as stored (the fair odds to 4 decimals), as a reader of the pick would.
   */
  storedEdge: number;
}
/**
 * One poll's candidates of a match: per selection, the best qualifying soft offer (highest price,
 * a tie to the first listed; in the odds range; edge at least PICK_MIN_EDGE), and every quoted
 * soft market the sanity rule refuses counted as a skip.
 */
function candidatesOf(match: Match, prices: Record<string, Prices>, skips: { count: number }): Candidate[] {
  const reference = prices[REFERENCE.key]!;
  const fair = fairProbabilities(reference);
  const books = SOFT.filter((book) => prices[book.key] !== null);
  const usable = books.filter((book) => softUsable(prices[book.key]!, reference));
  skips.count += books.length - usable.length;
  return match.names.flatMap((_, i) => {
    const best = usable
      .map((book, order) => ({ bookmaker: book.key, price: prices[book.key]![i]!, order }))
      .sort((a, b) => b.price - a.price || a.order - b.order)
      .map((offer) => ({ selection: i, bookmaker: offer.bookmaker, price: offer.price, edge: offer.price * fair[i]! - 1, storedEdge: offer.price / round4(1 / fair[i]!) - 1 }))
      .find((offer) => offer.price >= ODDS_MIN && offer.price <= ODDS_MAX && offer.edge >= MIN_EDGE);
    if (best === undefined) return [];
    if (best.edge >= REVIEW_EDGE) throw new Error('this set-up holds nothing as too good: raise REVIEW_EDGE');
    largestEdge = Math.max(largestEdge, best.edge);
    return [best];
  });
}
/** The largest edge of any candidate (nothing is held as too good). */
let largestEdge = 0;
/** One side per match: the best edge is published (a tie to the first in v4 order), the rest are held. */
const bestOf = (candidates: Candidate[]) => candidates.reduce<Candidate | undefined>((kept, c) => (kept === undefined || c.edge > kept.edge ? c : kept), undefined);

type Status = 'available' | 'moved' | 'gone';
interface Expected {
  key: string;
  eventId: string;
  kickoff: Date;
  selection: string;
  bookmaker: string;
  odds: number;
  publishedAt: Date;
  /** After the last check before kickoff. */
  status: Status;
  oddsNow: number | null;
  /** Unrounded post-tax edge (fraction) of oddsNow. */
  edgeNow: number | null;
  checkedAt: Date;
  since: Date;
  bestOdds: number;
  /** The close quoted the offer but could not judge it (its market failed the sanity rule): nothing but the best price changed. */
  unjudged: boolean;
  /** Every change of status, oldest first. */
  changes: { status: Status; at: Date }[];
  result: 'WON' | 'LOST';
}
interface Held {
  key: string;
  bookmaker: string;
  odds: number;
}

const keyOf = (match: Match, selection: number) => `${match.kickoff.toISOString()} ${match.home} ${match.names[selection]}`;
const resultOf = (match: Match, i: number): 'WON' | 'LOST' => {
  const winner = match.homeGoals > match.awayGoals ? 0 : match.homeGoals < match.awayGoals ? 1 : 2;
  return winner === i ? 'WON' : 'LOST';
};

/** Soft markets the sanity rule refuses at the opening and close polls (each a logged feed skip). */
const SKIPS = { count: 0 };
const OPENING_PICKS: Expected[] = [];
const CLOSE_PICKS: Expected[] = [];
/** Held picks per kickoff group, by the poll that made them. */
const HELD = { opening: new Map<string, Held[]>(), close: new Map<string, Held[]>() };
for (const match of MATCHES) {
  const opening = at(match.kickoff, -OPENING_BEFORE_KICKOFF);
  const close = at(match.kickoff, -CLOSE_BEFORE_KICKOFF);
  const group = match.kickoff.toISOString();
  const hold = (poll: 'opening' | 'close', held: Candidate[]) => {
    if (held.length > 0) HELD[poll].set(group, [...(HELD[poll].get(group) ?? []), ...held.map((c) => ({ key: keyOf(match, c.selection), bookmaker: c.bookmaker, odds: c.price }))]);
  };
  const published = (c: Candidate, when: Date) => ({
    key: keyOf(match, c.selection),
    eventId: match.eventId,
    kickoff: match.kickoff,
    selection: match.names[c.selection]!,
    bookmaker: c.bookmaker,
    odds: c.price,
    publishedAt: when,
    result: resultOf(match, c.selection),
  });

  const openingCandidates = candidatesOf(match, match.open, SKIPS);
  const pick = bestOf(openingCandidates);
  hold('opening', openingCandidates.filter((c) => c !== pick));
  const closeCandidates = candidatesOf(match, match.close, SKIPS);
  if (pick === undefined) {
    // No side shown yet: the close publishes its best candidate, available from a minute before kickoff.
    const closePick = bestOf(closeCandidates);
    hold('close', closeCandidates.filter((c) => c !== closePick));
    if (closePick) {
      CLOSE_PICKS.push({ ...published(closePick, close), status: 'available', oddsNow: closePick.price, edgeNow: closePick.storedEdge, checkedAt: close, since: close, bestOdds: closePick.price, unjudged: false, changes: [{ status: 'available', at: close }] });
    }
    continue;
  }
  // A side is shown: another side the close finds is held (once: a held selection keeps its pick), the same side has its pick.
  const taken = new Set(openingCandidates.map((c) => c.selection));
  hold('close', closeCandidates.filter((c) => !taken.has(c.selection)));

  // The pick's own offer at the close: its book's closing price for its selection.
  const closing = match.close[pick.bookmaker] ?? null;
  const expected = { ...published(pick, opening), changes: [{ status: 'available' as Status, at: opening }] };
  if (closing === null) {
    OPENING_PICKS.push({ ...expected, status: 'gone', oddsNow: null, edgeNow: null, checkedAt: close, since: close, bestOdds: pick.price, unjudged: false, changes: [...expected.changes, { status: 'gone', at: close }] });
    continue;
  }
  const price = closing[pick.selection]!;
  const bestOdds = Math.max(pick.price, price);
  if (!softUsable(closing, match.close[REFERENCE.key]!)) {
    OPENING_PICKS.push({ ...expected, status: 'available', oddsNow: pick.price, edgeNow: pick.storedEdge, checkedAt: opening, since: opening, bestOdds, unjudged: true });
    continue;
  }
  const edge = price * fairProbabilities(match.close[REFERENCE.key]!)[pick.selection]! - 1;
  const status: Status = edge >= MIN_EDGE ? 'available' : 'moved';
  const changes = status === 'available' ? expected.changes : [...expected.changes, { status, at: close }];
  OPENING_PICKS.push({ ...expected, status, oddsNow: price, edgeNow: edge, checkedAt: close, since: status === 'available' ? opening : close, bestOdds, unjudged: false, changes });
}
const PUBLISHED = [...OPENING_PICKS, ...CLOSE_PICKS];

/** The status at a time: the last change at or before it. */
const statusAt = (pick: Expected, when: Date) => pick.changes.filter((change) => change.at.getTime() <= when.getTime()).at(-1)!.status;
/**
 * The record's figures (fixed at settlement): the status 5 and 30 minutes after publication (at
 * kickoff if sooner), and the minutes until the status first left available (else until kickoff).
 */
function availabilityRecordOf(picks: Expected[]) {
  const checkpoint = (pick: Expected, minutes: number) => new Date(Math.min(pick.publishedAt.getTime() + minutes * MINUTE, pick.kickoff.getTime()));
  const percent = (minutes: number) => (100 * picks.filter((pick) => statusAt(pick, checkpoint(pick, minutes)) === 'available').length) / picks.length;
  const minutes = picks
    .map((pick) => ((pick.changes.find((change) => change.status !== 'available')?.at ?? pick.kickoff).getTime() - pick.publishedAt.getTime()) / MINUTE)
    .sort((a, b) => a - b);
  const middle = minutes.length / 2;
  const median = minutes.length % 2 === 1 ? minutes[Math.floor(middle)]! : (minutes[middle - 1]! + minutes[middle]!) / 2;
  return { tracked: picks.length, at5: percent(5), at30: percent(30), median, minutes };
}
/** The API rounds the record to 2 decimals. */
const ROUNDING = 0.005 + 1e-9;

// --- PICK_CONFIRM_POLLS=2 ---------------------------------------------------------------------
// A selection (match, market, selection: whatever book is best) is published only on its second
// consecutive poll as a candidate, at that poll's best offer. Each match is polled before kickoff
// at the opening and at the close only, so a pick needs the selection to be a candidate at both
// and is published at the close; the opening publishes nothing. One side per match still
// applies among the confirmed candidates: the best edge is published, the others are held.

interface ConfirmedPick {
  key: string;
  kickoff: Date;
  home: string;
  away: string;
  selection: string;
  bookmaker: string;
  odds: number;
  /** The close's best offer's edge as its first check shows it (from the stored prices). */
  edge: number;
  publishedAt: Date;
}
const CONFIRMED_PICKS: ConfirmedPick[] = [];
/** Confirmed sides held per kickoff group (all made by the close). */
const CONFIRMED_HELD = new Map<string, Held[]>();
for (const match of MATCHES) {
  // The skips were counted above (the same two polls).
  const openingSelections = new Set(candidatesOf(match, match.open, { count: 0 }).map((c) => c.selection));
  const confirmed = candidatesOf(match, match.close, { count: 0 }).filter((c) => openingSelections.has(c.selection));
  const pick = bestOf(confirmed);
  const held = confirmed.filter((c) => c !== pick).map((c) => ({ key: keyOf(match, c.selection), bookmaker: c.bookmaker, odds: c.price }));
  const group = match.kickoff.toISOString();
  if (held.length > 0) CONFIRMED_HELD.set(group, [...(CONFIRMED_HELD.get(group) ?? []), ...held]);
  if (pick === undefined) continue;
  CONFIRMED_PICKS.push({
    key: keyOf(match, pick.selection),
    kickoff: match.kickoff,
    home: match.home,
    away: match.away,
    selection: match.names[pick.selection]!,
    bookmaker: pick.bookmaker,
    odds: pick.price,
    edge: pick.storedEdge,
    publishedAt: at(match.kickoff, -CLOSE_BEFORE_KICKOFF),
  });
}
/**
 * The trade-off against PICK_CONFIRM_POLLS=1: which of its opening picks two polls still publish
 * (59 minutes later, at the close), which of them had lost their edge at their own book by the
 * close (moved or gone: the flickers confirmation is for), and its close picks, all first seen
 * as candidates at the close (a match with an opening candidate had its pick at the opening),
 * which two polls never confirm before kickoff.
 */
const TRADE_OFF = (() => {
  const confirmed = new Map(CONFIRMED_PICKS.map((pick) => [pick.key, pick]));
  const lostEdge = OPENING_PICKS.filter((pick) => pick.status !== 'available');
  const openingConfirmed = OPENING_PICKS.filter((pick) => confirmed.has(pick.key));
  return {
    openingConfirmed,
    /** Of the opening picks two polls publish, those at the same book and price as at the opening. */
    sameOffer: openingConfirmed.filter((pick) => confirmed.get(pick.key)!.bookmaker === pick.bookmaker && confirmed.get(pick.key)!.odds === pick.odds),
    lostEdge,
    /** Lost-edge picks two polls do not publish at all (another book may still carry the selection's edge). */
    lostEdgeAvoided: lostEdge.filter((pick) => !confirmed.has(pick.key)),
    closeDropped: CLOSE_PICKS.filter((pick) => !confirmed.has(pick.key)),
    /** The price two polls publish against the opening's. */
    higher: openingConfirmed.filter((pick) => confirmed.get(pick.key)!.odds > pick.odds),
    sameOdds: openingConfirmed.filter((pick) => confirmed.get(pick.key)!.odds === pick.odds),
    lower: openingConfirmed.filter((pick) => confirmed.get(pick.key)!.odds < pick.odds),
  };
})();

// --- The replay --------------------------------------------------------------------------------

const event = (match: Match, prices: Record<string, Prices>, stamp: Date) =>
  v4OddsEvent({
    id: match.eventId,
    sportKey: SPORT_KEY,
    sportTitle: 'EPL',
    commenceTime: match.kickoff,
    homeTeam: match.home,
    awayTeam: match.away,
    // A book whose cells are blank is not in the feed.
    bookmakers: [REFERENCE, ...SOFT].flatMap((book) => {
      const quoted = prices[book.key];
      return quoted === null || quoted === undefined ? [] : [v4Bookmaker(book.key, book.title, Object.fromEntries(match.names.map((name, i) => [name, quoted[i]!])), stamp)];
    }),
  });

const REVIEW_QUEUE = `query { reviewQueue(first: 200) { nodes { homeTeam kickoffAt selection bookmaker { slug } odds } pageInfo { hasNextPage } } }`;
type QueueNode = { homeTeam: string; kickoffAt: string; selection: string; bookmaker: { slug: string }; odds: number };

type RestPick = {
  home_team: string;
  kickoff_at: string;
  selection: string;
  market: string;
  status: string;
  result: string | null;
  odds: number;
  bookmaker: { slug: string };
  published_at: string;
  availability: { status: string; odds_now: number | null; edge_pct_now: number | null; checked_at: string | null; since: string | null };
  best_odds_since_published: number | null;
};

/**
 * The replay's app: a local v4 feed, the manual clock three hours before the first kickoff, and
 * the settings above with PICK_CONFIRM_POLLS. A soft market the sanity rules refuse (an
 * arbitrage, a price beyond 3 x Pinnacle's) is a logged skip, counted in the first test.
 */
async function startReplay(confirmPolls: number): Promise<{ feed: OddsFeedServer; t: TestApp; clock: ManualClock; log: ReplayLog }> {
  const feed = await startOddsFeedServer();
  const clock = new ManualClock(at(GROUPS[0]!.kickoff, -3 * HOUR));
  const { app: t, log } = await startReplayApp(
    feed,
    clock,
    {
      ODDS_FEED_SPORTS: SPORT_KEY,
      ODDS_FEED_MARKETS: 'h2h',
      REFERENCE_BOOKMAKERS: REFERENCE.key,
      DEVIG_METHOD: 'multiplicative',
      BOOKMAKER_TAX_RATES: JSON.stringify(Object.fromEntries(SOFT.map((book) => [book.key, 0]))),
      PICK_MIN_EDGE: String(MIN_EDGE),
      PICK_ODDS_RANGE: `${ODDS_MIN}-${ODDS_MAX}`,
      PICK_REVIEW_EDGE: String(REVIEW_EDGE),
      PICK_CONFIRM_POLLS: String(confirmPolls),
    },
    { expectedSkip: /'s h2h market not used for this event \((negative_margin|price_beyond_reference_multiple)\)/ },
  );
  return { feed, t, clock, log };
}

/** A poll by hand, and the review queue as the expectations key it. */
function replayReads(app: () => TestApp) {
  return {
    poll: async () => expect(await app().runtime.poller!.pollNow(['odds'])).toBe(true),
    reviewQueue: async () => {
      const page = (await app().graphql<{ reviewQueue: { nodes: QueueNode[]; pageInfo: { hasNextPage: boolean } } }>(REVIEW_QUEUE)).data!.reviewQueue;
      expect(page.pageInfo.hasNextPage).toBe(false);
      return page.nodes.map((n) => ({ key: `${n.kickoffAt} ${n.homeTeam} ${n.selection}`, bookmaker: n.bookmaker.slug, odds: n.odds })).sort((a, b) => a.key.localeCompare(b.key));
    },
  };
}

const sorted = (held: Held[]) => [...held].sort((a, b) => a.key.localeCompare(b.key));

describe('pick availability on real 1X2 prices (Premier League 2023/24, first 160 matches): opening an hour before kickoff, close a minute before', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let log: ReplayLog;
  beforeAll(async () => ({ feed, t, clock, log } = await startReplay(1)));
  afterAll(async () => {
    await t?.close();
    await feed?.close();
  });
  const { poll, reviewQueue } = replayReads(() => t);

  it("tracks each pick's own offer to the close (available, moved, gone from a blank close), stops at kickoff, and the record counts it", async () => {
    expect(MATCHES).toHaveLength(160);
    // Why this set-up: Bwin's blank closes (rows 20 to 29) hold no Bwin edge at all against a power devig.
    const bwinLeavesAtClose = MATCHES.filter((m) => m.open.bwin !== null && m.close.bwin === null);
    expect(bwinLeavesAtClose.map((m) => m.eventId)).toEqual(Array.from({ length: 10 }, (_, i) => `e0-2324-${20 + i}`));
    const blanks = (time: 'open' | 'close') => MATCHES.flatMap((m) => SOFT.filter((book) => m[time][book.key] === null).map((book) => `${book.key} ${m.eventId}`));
    expect(blanks('open')).toEqual(['bwin e0-2324-104', 'bwin e0-2324-152']);
    expect(blanks('close')).toEqual([...bwinLeavesAtClose.map((m) => m.eventId), 'e0-2324-104', 'e0-2324-152'].map((id) => `bwin ${id}`));
    const powerEdges = bwinLeavesAtClose.flatMap((m) => powerDevig(m.open.pinnacle!).map((p, i) => m.open.bwin![i]! * p - 1));
    expect(Math.max(...powerEdges)).toBeLessThan(0);
    // The numbers of the header.
    const count = (picks: Expected[], status: Status) => picks.filter((p) => p.status === status && !p.unjudged).length;
    const byBook = Object.fromEntries(SOFT.map((book) => [book.key, OPENING_PICKS.filter((p) => p.bookmaker === book.key).length]));
    expect(OPENING_PICKS).toHaveLength(20);
    expect(byBook).toEqual({ bwin: 4, interwetten: 4, williamhill: 2, betvictor: 10 });
    expect([count(OPENING_PICKS, 'available'), count(OPENING_PICKS, 'moved'), count(OPENING_PICKS, 'gone')]).toEqual([8, 11, 1]);
    expect(OPENING_PICKS.filter((p) => p.unjudged)).toEqual([]);
    expect(CLOSE_PICKS).toHaveLength(26);
    expect([[...HELD.opening.values()].flat().length, [...HELD.close.values()].flat().length]).toEqual([0, 2]);
    expect(Math.round(largestEdge * 1000) / 10).toBe(12);
    // The gone pick is Bwin's, in the rows whose Bwin closing cells are blank.
    expect(OPENING_PICKS.filter((p) => p.status === 'gone').map((p) => [p.bookmaker, p.eventId])).toEqual([['bwin', 'e0-2324-22']]);

    for (const { kickoff, matches } of GROUPS) {
      const group = kickoff.toISOString();
      clock.set(at(kickoff, -OPENING_BEFORE_KICKOFF));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.open, at(clock.now(), -30_000))));
      await poll();
      expect(await reviewQueue()).toEqual(sorted(HELD.opening.get(group) ?? []));

      clock.set(at(kickoff, -CLOSE_BEFORE_KICKOFF));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.close, at(clock.now(), -30_000))));
      await poll();
      expect(await reviewQueue()).toEqual(sorted([...(HELD.opening.get(group) ?? []), ...(HELD.close.get(group) ?? [])]));

      // After kickoff nothing is checked: the opening prices again change no status.
      clock.set(at(kickoff, MINUTE));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.open, at(clock.now(), -30_000))));
      await poll();

      clock.set(at(kickoff, 2.5 * HOUR));
      const finals = matches.map((m) => v4ScoreEvent({ id: m.eventId, commenceTime: m.kickoff, completed: true, homeTeam: m.home, awayTeam: m.away, scores: [m.homeGoals, m.awayGoals] }));
      feed.set('scores', SPORT_KEY, finals);
      expect(await t.runtime.poller!.pollNow(['scores'])).toBe(true);
    }
    expect(feed.requests.find((r) => r.path.endsWith('/odds'))!.query.get('markets')).toBe('h2h');

    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?market=h2h&limit=200', headers: { authorization: `Bearer ${key}` } });
    expect(rest.statusCode).toBe(200);
    const picks = (rest.json() as { data: RestPick[] }).data;
    const actual = new Map(picks.map((p) => [`${p.kickoff_at} ${p.home_team} ${p.selection}`, p]));
    expect([...actual.keys()].sort()).toEqual(PUBLISHED.map((p) => p.key).sort());
    for (const expected of PUBLISHED) {
      const pick = actual.get(expected.key)!;
      const edgePctNow = pick.availability.edge_pct_now;
      expect({
        key: expected.key,
        bookmaker: pick.bookmaker.slug,
        odds: pick.odds,
        publishedAt: pick.published_at,
        status: pick.status,
        result: pick.result,
        availability: { ...pick.availability, edge_pct_now: edgePctNow === null ? null : 'checked below' },
        best: pick.best_odds_since_published,
      }).toEqual({
        key: expected.key,
        bookmaker: expected.bookmaker,
        odds: expected.odds,
        publishedAt: expected.publishedAt.toISOString(),
        status: 'settled',
        result: expected.result.toLowerCase(),
        availability: {
          status: expected.status,
          odds_now: expected.oddsNow,
          edge_pct_now: expected.edgeNow === null ? null : 'checked below',
          checked_at: expected.checkedAt.toISOString(),
          since: expected.since.toISOString(),
        },
        best: expected.bestOdds,
      });
      // Percent to 4 decimals: within half a unit of the last decimal of the exact edge.
      if (expected.edgeNow !== null) expect(Math.abs(edgePctNow! - 100 * expected.edgeNow), expected.key).toBeLessThanOrEqual(0.00005 + 1e-9);
    }

    // The record: every published pick was checked before kickoff, so every one is tracked.
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=365', headers: { authorization: `Bearer ${key}` } });
    expect(response.statusCode).toBe(200);
    const body = response.json() as { overall: { total_settled: number }; availability: Record<string, number | null> };
    const figures = availabilityRecordOf(PUBLISHED);
    expect(body.overall.total_settled).toBe(PUBLISHED.length);
    expect(body.availability.tracked_picks).toBe(figures.tracked);
    expect(Math.abs(body.availability.available_at_5_min_pct! - figures.at5)).toBeLessThanOrEqual(ROUNDING);
    expect(Math.abs(body.availability.available_at_30_min_pct! - figures.at30)).toBeLessThanOrEqual(ROUNDING);
    expect(Math.abs(body.availability.median_minutes_available! - figures.median)).toBeLessThanOrEqual(ROUNDING);
    // The header's figures.
    expect([figures.tracked, figures.at5, figures.at30, figures.median]).toEqual([46, 100, 100, 1]);
    expect([figures.minutes.filter((m) => m === 59).length, figures.minutes.filter((m) => m === 60).length, figures.minutes.filter((m) => m === 1).length]).toEqual([12, 8, 26]);

    // A clean replay: nothing skipped but the soft markets the sanity rules refuse.
    expect(log.problems).toEqual([]);
    expect(log.skipped).toBe(SKIPS.count);
    console.log(
      `real availability: ${OPENING_PICKS.length} picks at the opening, at the close ${count(OPENING_PICKS, 'available')} available, ` +
        `${count(OPENING_PICKS, 'moved')} moved, ${count(OPENING_PICKS, 'gone')} gone, ${OPENING_PICKS.filter((p) => p.unjudged).length} unjudged; ` +
        `${CLOSE_PICKS.length} published at the close; record: tracked ${figures.tracked}, at 5 min ${figures.at5.toFixed(2)} %, ` +
        `at 30 min ${figures.at30.toFixed(2)} %, median ${figures.median} min; ${SKIPS.count} soft markets refused by the sanity rules`,
    );
  });
});

describe('PICK_CONFIRM_POLLS=2 on the same real prices: a selection is published only when the opening and the close both find it', () => {
  let feed: OddsFeedServer;
  let t: TestApp;
  let clock: ManualClock;
  let log: ReplayLog;
  beforeAll(async () => ({ feed, t, clock, log } = await startReplay(2)));
  afterAll(async () => {
    await t?.close();
    await feed?.close();
  });
  const { poll, reviewQueue } = replayReads(() => t);

  it('publishes at the close, at its best offer, only the selections both polls found; the opening publishes nothing', async () => {
    const key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'ENTERPRISE' } })).data!.createApiKey.key;
    const listPicks = async () => {
      const rest = await t.app.inject({ method: 'GET', url: '/api/v1/picks?market=h2h&limit=200', headers: { authorization: `Bearer ${key}` } });
      expect(rest.statusCode).toBe(200);
      return (rest.json() as { data: (RestPick & { away_team: string })[] }).data;
    };
    const keysOf = (picks: { key: string }[]) => picks.map((p) => p.key).sort();
    const restKeys = (picks: RestPick[]) => picks.map((p) => `${p.kickoff_at} ${p.home_team} ${p.selection}`).sort();

    // The trade-off, from the CSV (printed below).
    expect(CONFIRMED_PICKS).toHaveLength(TRADE_OFF.openingConfirmed.length);
    expect([TRADE_OFF.openingConfirmed.length, TRADE_OFF.sameOffer.length, TRADE_OFF.lostEdge.length, TRADE_OFF.lostEdgeAvoided.length, TRADE_OFF.closeDropped.length]).toEqual([9, 1, 12, 11, 26]);
    expect([TRADE_OFF.higher.length, TRADE_OFF.sameOdds.length, TRADE_OFF.lower.length]).toEqual([4, 1, 4]);
    // The 9: the 8 still available at the close, and one moved at its own book whose selection another book still carries.
    expect(TRADE_OFF.openingConfirmed.map((pick) => pick.status).sort()).toEqual([...Array<Status>(8).fill('available'), 'moved']);
    // No match had two candidates at the opening, so none has two confirmed sides to hold.
    expect([...CONFIRMED_HELD.values()].flat()).toEqual([]);

    for (const { kickoff, matches } of GROUPS) {
      const group = kickoff.toISOString();
      const before = CONFIRMED_PICKS.filter((p) => p.kickoff.getTime() < kickoff.getTime());
      const heldBefore = GROUPS.filter((g) => g.kickoff.getTime() < kickoff.getTime()).flatMap((g) => CONFIRMED_HELD.get(g.kickoff.toISOString()) ?? []);
      clock.set(at(kickoff, -OPENING_BEFORE_KICKOFF));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.open, at(clock.now(), -30_000))));
      await poll();
      // A first sighting is never published, nor held.
      expect(restKeys(await listPicks())).toEqual(keysOf(before));
      expect(await reviewQueue()).toEqual(sorted(heldBefore));

      clock.set(at(kickoff, -CLOSE_BEFORE_KICKOFF));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.close, at(clock.now(), -30_000))));
      await poll();
      expect(restKeys(await listPicks())).toEqual(keysOf(CONFIRMED_PICKS.filter((p) => p.kickoff.getTime() <= kickoff.getTime())));
      expect(await reviewQueue()).toEqual(sorted([...heldBefore, ...(CONFIRMED_HELD.get(group) ?? [])]));

      // After kickoff: the opening prices again are a first sighting of nothing that can be published.
      clock.set(at(kickoff, MINUTE));
      feed.set('odds', SPORT_KEY, matches.map((m) => event(m, m.open, at(clock.now(), -30_000))));
      await poll();

      clock.set(at(kickoff, 2.5 * HOUR));
      const finals = matches.map((m) => v4ScoreEvent({ id: m.eventId, commenceTime: m.kickoff, completed: true, homeTeam: m.home, awayTeam: m.away, scores: [m.homeGoals, m.awayGoals] }));
      feed.set('scores', SPORT_KEY, finals);
      expect(await t.runtime.poller!.pollNow(['scores'])).toBe(true);
    }

    const picks = await listPicks();
    const shape = (p: { kickoff: string; home: string; away: string; selection: string; bookmaker: string; odds: number; publishedAt: string }) => p;
    expect(picks.map((p) => shape({ kickoff: p.kickoff_at, home: p.home_team, away: p.away_team, selection: p.selection, bookmaker: p.bookmaker.slug, odds: p.odds, publishedAt: p.published_at })).sort((a, b) => `${a.kickoff} ${a.home}`.localeCompare(`${b.kickoff} ${b.home}`))).toEqual(
      CONFIRMED_PICKS.map((p) => shape({ kickoff: p.kickoff.toISOString(), home: p.home, away: p.away, selection: p.selection, bookmaker: p.bookmaker, odds: p.odds, publishedAt: p.publishedAt.toISOString() })).sort((a, b) => `${a.kickoff} ${a.home}`.localeCompare(`${b.kickoff} ${b.home}`)),
    );
    // The confirming poll is each pick's first check, and the last before kickoff.
    const byKey = new Map(picks.map((p) => [`${p.kickoff_at} ${p.home_team} ${p.selection}`, p]));
    for (const expected of CONFIRMED_PICKS) {
      const pick = byKey.get(expected.key)!;
      const published = expected.publishedAt.toISOString();
      expect({ ...pick.availability, edge_pct_now: 'checked below' }).toEqual({ status: 'available', odds_now: expected.odds, edge_pct_now: 'checked below', checked_at: published, since: published });
      expect(Math.abs(pick.availability.edge_pct_now! - 100 * expected.edge), expected.key).toBeLessThanOrEqual(0.00005 + 1e-9);
    }

    expect(log.problems).toEqual([]);
    expect(log.skipped).toBe(SKIPS.count);
    console.log(
      `real availability, PICK_CONFIRM_POLLS=2: ${CONFIRMED_PICKS.length} picks, all at the close; of the ${OPENING_PICKS.length} opening picks of PICK_CONFIRM_POLLS=1, ` +
        `${TRADE_OFF.openingConfirmed.length} published 59 minutes later (${TRADE_OFF.sameOffer.length} at the same book and price; ` +
        `at a higher price ${TRADE_OFF.higher.length}, the same ${TRADE_OFF.sameOdds.length}, a lower ${TRADE_OFF.lower.length}); ` +
        `${TRADE_OFF.lostEdge.length} had lost their edge by the close (moved or gone), ${TRADE_OFF.lostEdgeAvoided.length} of them not published with two polls; ` +
        `${TRADE_OFF.closeDropped.length} of the ${CLOSE_PICKS.length} close picks dropped (first candidates at the close)`,
    );
  });
});
