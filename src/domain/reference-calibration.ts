/**
 * Which reference, and which devig method, foretold the results best (docs/VALUE_ENGINE.md,
 * "Choosing a reference"): the backtest's `--calibration`. Per match, each book's closing 1X2
 * market (the last one it quoted before kickoff, kept by the rule the engine keeps a reference's
 * market for the close: replacesKeptReference) and the final the engine accepts (judgeFinal);
 * then, per book and for the configured references' consensus, per devig method, the mean log
 * loss, Brier score and ranked probability score of its fair probabilities against the results.
 * A book's market is priced exactly as the engine prices a reference (referenceConsensus: an
 * exchange with lay prices by its midpoint, any other market by the method). Also which books
 * quoted which events (the command's check of --references and --books). Pure: no I/O.
 */
import type { BacktestPoll } from './backtest.js';
import { DEVIG_METHODS, type DevigMethod } from './devig.js';
import { generationOf, replacesKeptReference, type KeptReferenceMarket } from './engine-rules.js';
import { DRAW_SELECTION } from './market.js';
import { roundTo } from './numbers.js';
import { sportSlugOfKey, type OddsOutcome } from './odds-feed.js';
import { referenceConsensus, type ReferenceBook } from './reference-consensus.js';
import { judgeFinal, type FinalScore, type SettlementOptions } from './settlement.js';
import type { SportSlug } from './sports.js';

/** The events each bookmaker quoted any market of, and how many events the polls list. */
export interface BookQuotes {
  events: number;
  /** Bookmaker key -> events it quoted, in the order the bookmakers first appear. */
  quoted: Map<string, number>;
}

export function bookQuotes(polls: readonly BacktestPoll[]): BookQuotes {
  const events = new Set<string>();
  const quoted = new Map<string, Set<string>>();
  for (const poll of polls) {
    if (poll.kind !== 'odds') continue;
    for (const event of poll.events) {
      events.add(event.id);
      for (const bookmaker of event.bookmakers) {
        const set = quoted.get(bookmaker.key) ?? new Set<string>();
        quoted.set(bookmaker.key, set);
        set.add(event.id);
      }
    }
  }
  return { events: events.size, quoted: new Map([...quoted].map(([key, set]) => [key, set.size])) };
}

/** One match with a final: its result and each book's closing 1X2 prices in the order home, draw, away. */
export interface ClosingMatch {
  eventId: string;
  /** 0: the home side won, 1: a draw, 2: the away side won. */
  result: 0 | 1 | 2;
  closing: Map<string, OddsOutcome[]>;
}

interface MatchState {
  sport: SportSlug;
  homeTeam: string;
  awayTeam: string;
  commenceTime: Date;
  generation: number;
  completed: boolean;
  final: FinalScore | null;
  kept: Map<string, KeptReferenceMarket>;
}

/**
 * The matches of the polls that have a final, with the books' closing 1X2 markets. Polls replay
 * in time order (equal times in the order given), as the backtest replays them; an event id
 * reused for a new fixture (another kickoff after a final) is another match, as in the engine.
 * A book whose h2h market is not exactly the two teams and the draw is left out of that match.
 */
export function closingMatches(polls: readonly BacktestPoll[], settlement: Pick<SettlementOptions, 'matchMinMinutes'>): ClosingMatch[] {
  const current = new Map<string, MatchState>();
  const finished: { eventId: string; state: MatchState }[] = [];
  const ordered = polls.map((poll, index) => ({ poll, index })).sort((a, b) => a.poll.at.getTime() - b.poll.at.getTime() || a.index - b.index);
  for (const { poll } of ordered) {
    if (poll.kind === 'odds') {
      for (const event of poll.events) {
        const sport = sportSlugOfKey(event.sportKey);
        if (sport === null) continue;
        const known = current.get(event.id);
        const generation = generationOf(known, event.commenceTime);
        let state = known;
        if (!state || generation !== state.generation) {
          if (state) finished.push({ eventId: event.id, state });
          state = { sport, homeTeam: event.homeTeam, awayTeam: event.awayTeam, commenceTime: event.commenceTime, generation, completed: false, final: null, kept: new Map() };
          current.set(event.id, state);
        }
        Object.assign(state, { sport, homeTeam: event.homeTeam, awayTeam: event.awayTeam, commenceTime: event.commenceTime });
        for (const bookmaker of event.bookmakers) {
          const market = bookmaker.markets.find((candidate) => candidate.key === 'h2h');
          if (!market) continue;
          const observed = { line: null, prices: market.outcomes, updatedAt: market.lastUpdate ?? bookmaker.lastUpdate };
          if (replacesKeptReference(state.kept.get(bookmaker.key), observed, event.commenceTime)) state.kept.set(bookmaker.key, observed);
        }
      }
    } else {
      for (const record of poll.events) {
        const state = current.get(record.id);
        if (!state) continue;
        if (!record.completed) {
          if (state.completed && record.commenceTime.getTime() === state.commenceTime.getTime()) Object.assign(state, { completed: false, final: null });
          continue;
        }
        const verdict = judgeFinal(record, state, poll.at, settlement.matchMinMinutes[state.sport]);
        if ('final' in verdict) Object.assign(state, { completed: true, final: verdict.final });
      }
    }
  }
  for (const [eventId, state] of current) finished.push({ eventId, state });

  return finished.flatMap(({ eventId, state }) => {
    if (state.final === null) return [];
    const { homeScore, awayScore } = state.final;
    const result = homeScore > awayScore ? 0 : homeScore === awayScore ? 1 : 2;
    const order = [state.homeTeam, DRAW_SELECTION, state.awayTeam];
    const closing = new Map<string, OddsOutcome[]>();
    for (const [bookmaker, kept] of state.kept) {
      // The kickoff may have moved earlier since: only prices from before the final's kickoff close.
      if (kept.updatedAt.getTime() >= state.commenceTime.getTime() || kept.prices.length !== 3) continue;
      const outcomes = order.map((name) => kept.prices.find((o) => o.name === name));
      if (outcomes.every((o) => o !== undefined)) closing.set(bookmaker, outcomes as OddsOutcome[]);
    }
    return [{ eventId, result, closing }];
  });
}

/** The row of the configured references' consensus in the calibration table. */
export const CONSENSUS_REFERENCE = 'consensus';

export interface CalibrationRow {
  /** A bookmaker key, or `consensus`. */
  reference: string;
  method: DevigMethod;
  /** Matches with a result that this reference and method priced. */
  matches: number;
  /** Means over those matches, to 6 decimals: -ln p(result); sum of (p - y)^2; ranked probability score. */
  logLoss: number;
  brier: number;
  rps: number;
}

/** -ln p(result), sum (p - y)^2 and (1/2) sum over i = 1, 2 of (cumulative p - cumulative y)^2, outcomes home, draw, away. */
export function matchScores(probabilities: readonly number[], result: 0 | 1 | 2): { logLoss: number; brier: number; rps: number } {
  const y = [0, 1, 2].map((index) => (index === result ? 1 : 0));
  let cumulative = 0;
  let rps = 0;
  for (const index of [0, 1]) {
    cumulative += probabilities[index]! - y[index]!;
    rps += cumulative ** 2;
  }
  return {
    logLoss: -Math.log(probabilities[result]!),
    brier: probabilities.reduce((sum, p, index) => sum + (p - y[index]!) ** 2, 0),
    rps: rps / 2,
  };
}

/**
 * The calibration table: the consensus of `references` (their weights, as detection combines
 * them) and each of `books` on its own, by every devig method, over the matches each prices. A
 * match where the reference has no closing market or the method refuses it is left out of that
 * row; a reference and method that price no match have no row. Rows come consensus first, then
 * the books in the order given, the methods in DEVIG_METHODS order.
 */
export function referenceCalibration(
  matches: readonly ClosingMatch[],
  books: readonly string[],
  references: readonly ReferenceBook[],
  maxExchangeSpread: number,
): CalibrationRow[] {
  const subjects = [
    { reference: CONSENSUS_REFERENCE, weights: references },
    ...books.map((key) => ({ reference: key, weights: [{ key, weight: 1 }] })),
  ];
  return subjects.flatMap(({ reference, weights }) =>
    DEVIG_METHODS.flatMap((method) => {
      const sums = { matches: 0, logLoss: 0, brier: 0, rps: 0 };
      for (const match of matches) {
        const quotes = weights.flatMap(({ key, weight }) => {
          const outcomes = match.closing.get(key);
          return outcomes ? [{ bookmaker: key, weight, outcomes, updatedAt: new Date(0) }] : [];
        });
        if (quotes.length === 0) continue;
        const consensus = referenceConsensus(quotes, method, maxExchangeSpread);
        if (!('quotes' in consensus)) continue;
        const scores = matchScores(consensus.probabilities, match.result);
        sums.matches += 1;
        sums.logLoss += scores.logLoss;
        sums.brier += scores.brier;
        sums.rps += scores.rps;
      }
      if (sums.matches === 0) return [];
      const mean = (total: number) => roundTo(total / sums.matches, 6);
      return [{ reference, method, matches: sums.matches, logLoss: mean(sums.logLoss), brier: mean(sums.brier), rps: mean(sums.rps) }];
    }),
  );
}
