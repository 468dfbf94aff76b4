/**
 * Bench data: N picks in one INSERT ... SELECT generate_series (like
 * test/integration/indexes.test.ts), spread over two years of kickoffs up to a week ahead,
 * 13 sports weighted towards soccer and tennis, 40 leagues, varied odds/edges/tiers, about
 * 10% held in admin_review, past kickoffs settled, and a few dozen picks first published
 * today so the public endpoint has its full default page of 20. Then ANALYZE.
 *
 * Plain SQL accepted by PostgreSQL 15 and PGlite alike. Deterministic ids (md5 of the row
 * number), so two runs on the same N produce the same list bodies.
 */

export const SPORTS_WEIGHTED = [
  'soccer', 'soccer', 'soccer', 'soccer', 'tennis', 'tennis', 'basketball', 'basketball',
  'icehockey', 'americanfootball', 'baseball', 'esports', 'mma', 'boxing', 'rugbyunion', 'cricket',
];

export const LEAGUES = [
  'Premier League', 'La Liga', 'Serie A', 'Bundesliga', 'Ligue 1', 'Eredivisie', 'Primeira Liga', 'Championship',
  'MLS', 'Champions League', 'Europa League', 'ATP Tour', 'WTA Tour', 'ATP Challenger', 'NBA', 'EuroLeague',
  'NCAA Basketball', 'NHL', 'KHL', 'SHL', 'NFL', 'NCAA Football', 'MLB', 'NPB', 'KBO', 'LoL LCK', 'CS2 Major',
  'Dota 2 TI', 'UFC', 'Bellator', 'PFL', 'Boxing WBC', 'Boxing WBA', 'Six Nations', 'Premiership Rugby',
  'Super Rugby', 'Top 14', 'IPL', 'The Ashes', 'Big Bash',
];

const sqlArray = (values) => `array[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`;

/** Picks whose published_at falls on the current UTC day (the public endpoint's page). */
export const TODAY_PICKS = 60;

export function seedPicksSql(count) {
  if (!Number.isSafeInteger(count) || count < TODAY_PICKS * 2) throw new RangeError(`picks must be an integer >= ${TODAY_PICKS * 2}`);
  // Row i: kickoff from 730 days ago (i = 1) to 7 days ahead (i = count), minute-jittered.
  return `
    insert into picks (id, sport, league, home_team, away_team, kickoff_at, market, selection, description,
      bookmaker_name, bookmaker_slug, odds, reference_fair_odds, tax_rate, edge_pct, edge_pct_post_tax,
      kelly_fraction, edge_tier, confidence, status, result, closing_odds, published_at, settled_at, created_at, updated_at, stake_pct)
    select md5('bench-pick-' || i)::uuid,
      g.sport, g.league, g.home, g.away, g.kickoff, 'h2h', g.home, g.home || ' to win @ ' || to_char(g.odds, 'FM990.00'),
      g.book_name, g.book_slug, g.odds, round(g.fair, 4), 0.053,
      round((g.odds / g.fair - 1) * 100, 4),
      round(g.odds * 0.947 / g.fair - 1, 6),
      round(greatest(0, (g.odds * 0.947 / g.fair - 1) / (g.odds * 0.947 - 1)), 6),
      case when g.odds * 0.947 / g.fair - 1 >= 0.08 then 'big_edge' when g.odds * 0.947 / g.fair - 1 >= 0.04 then 'stark' else 'standard' end,
      40 + (i * 17) % 56,
      g.status,
      case when g.status = 'settled' then (array['won','lost','won','lost','lost','void','half_won','half_lost'])[1 + (i * 5) % 8] end,
      case when g.status = 'settled' then round(g.odds * (0.94 + ((i * 11) % 10) / 100.0), 4) end,
      case when g.status = 'admin_review' then null
           when i > ${count} - ${TODAY_PICKS} then greatest(date_trunc('day', now() at time zone 'UTC') at time zone 'UTC',
                                                 now() - ((i % ${TODAY_PICKS}) * interval '7 minutes'))
           else least(g.kickoff - interval '20 hours', date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '1 hour') end,
      case when g.status = 'settled' then g.kickoff + interval '2 hours' end,
      now(), now(),
      least(2, round(100 * 0.25 * greatest(0, (g.odds * 0.947 / g.fair - 1) / (g.odds * 0.947 - 1)), 2))
    from generate_series(1, ${count}) as i,
    lateral (
      select s.sport, s.league, s.home, s.away, s.kickoff, s.odds, s.book_name, s.book_slug,
        s.odds / (1 + (1.5 + ((i * 29) % 110) / 10.0) / 100) as fair,
        case when i % 10 = 0 then 'admin_review'
             when s.kickoff < now() - interval '3 hours' then 'settled'
             else 'published' end as status
      from (select
        (${sqlArray(SPORTS_WEIGHTED)})[1 + ((i::bigint * 7919) % ${SPORTS_WEIGHTED.length})::int] as sport,
        (${sqlArray(LEAGUES)})[1 + (i * 31) % ${LEAGUES.length}] as league,
        'Home ' || ((i * 37) % 400) as home,
        'Away ' || ((i * 41) % 400 + 400) as away,
        date_trunc('minute', now() - interval '730 days' + (i::float8 / ${count}) * interval '737 days' + ((i * 37) % 90) * interval '1 minute') as kickoff,
        round(1.45 + ((i * 13) % 260) / 100.0, 2)::numeric as odds,
        (array['Bet365','Pinnacle','Unibet','Betfair','William Hill','Bwin'])[1 + (i * 3) % 6] as book_name,
        (array['bet365','pinnacle','unibet','betfair','williamhill','bwin'])[1 + (i * 3) % 6] as book_slug
      ) as s
    ) as g`;
}

/**
 * Match analyses for about one pick in eight (ids whose first hex digit is 0 or 1, visible or
 * held alike: analyses are written before approval), after seedPicksSql. About 1.3 KB of text
 * each, built from the pick's own columns, so two runs on the same N produce the same bodies.
 */
export function seedAnalysesSql() {
  return `
    insert into match_analyses (match_id, analysis, created_at, updated_at)
    select p.id,
      format(E'%s v %s, %s (%s), kickoff %s UTC.\\n\\n', p.home_team, p.away_team, p.league, p.sport, to_char(p.kickoff_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI')) ||
      format(E'%s offers %s at %s against a fair price of %s from the sharp reference: an edge of %s%% before and %s%% after the %s%% betting tax (%s tier, confidence %s).\\n\\n',
        p.bookmaker_name, p.selection, to_char(p.odds, 'FM990.00'), to_char(p.reference_fair_odds, 'FM990.00'),
        to_char(p.edge_pct, 'FM990.00'), to_char(p.edge_pct_post_tax * 100, 'FM990.00'), to_char(p.tax_rate * 100, 'FM990.0'), p.edge_tier, p.confidence) ||
      repeat(format('Form, lineups and the market move around %s were checked against the model before publication; the stake follows a fractional Kelly of %s. ',
        p.selection, to_char(p.kelly_fraction, 'FM990.0000')), 6),
      p.created_at, p.updated_at
    from picks p
    where substr(p.id::text, 1, 1) in ('0', '1')`;
}
