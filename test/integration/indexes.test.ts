/**
 * The hot queries must be answerable from their indexes: with sequential scans disabled the
 * planner still finds an index path (a query without a usable index would fall back to a
 * "Seq Scan" regardless). Scale figures at 1M picks are in docs/PERFORMANCE.md (bench/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePickCursor } from '../../src/domain/cursor.js';
import { trackRecordWindow } from '../../src/domain/track-record.js';
import { listPicksSql, todayPicksSql, type SqlQuery } from '../../src/persistence/picks-repository.js';
import { settledRecordPicksSql, trackRecordSql } from '../../src/persistence/track-record-repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // 20,000 picks over five years so the planner sees realistic selectivity.
  const em = t.runtime.orm.em.fork();
  await em.execute(`
    insert into picks (id, sport, league, home_team, away_team, kickoff_at, market, selection, description,
      bookmaker_name, bookmaker_slug, odds, reference_fair_odds, tax_rate, edge_pct, edge_pct_post_tax,
      kelly_fraction, edge_tier, confidence, status, result, closing_odds, published_at, settled_at, created_at, updated_at, stake_pct)
    select (lpad(to_hex(i), 8, '0') || '-0000-7000-8000-000000000000')::uuid,
      (array['soccer','basketball','americanfootball','icehockey','baseball','tennis','esports','mma','boxing','rugbyunion','cricket'])[1 + i % 11],
      'League ' || (i % 50), 'H' || i, 'A' || i,
      timestamptz '2022-01-01' + (i * interval '2 hours'), 'h2h', 'H' || i, 'H' || i || ' to win @ 2.10',
      'Bet365', 'bet365', 2.1, 2.0, 0.053, 5, 0.0, 0.0, 'standard', 50,
      case when i % 10 = 0 then 'admin_review' when i < 19000 then 'settled' else 'published' end,
      case when i % 10 <> 0 and i < 19000 then 'won' end,
      case when i % 10 <> 0 and i < 19000 then 2.0 end,
      case when i % 10 <> 0 then timestamptz '2022-01-01' + (i * interval '2 hours') - interval '1 day' end,
      case when i % 10 <> 0 and i < 19000 then timestamptz '2022-01-01' + (i * interval '2 hours') + interval '3 hours' end,
      now(), now(), 0
    from generate_series(1, 20000) as i`);
  await em.execute('analyze picks');
});
afterAll(async () => {
  await t?.close();
});

async function plan({ sql, params }: SqlQuery): Promise<string> {
  return t.runtime.orm.em.fork().transactional(async (em) => {
    await em.execute('set local enable_seqscan = off');
    const rows = await em.execute<Record<string, string>[]>(`explain ${sql}`, params);
    return rows.map((row) => Object.values(row)[0]).join('\n');
  });
}

const now = new Date('2026-11-22T12:00:00Z');
const cursor = encodePickCursor({ kickoffAt: now, id: '01a204c1-8abc-72ba-9e37-b0bc3d74b3e1' });

describe('query plans', () => {
  it.each([
    ['list', listPicksSql({}, 51), 'picks_visible_kickoff_idx'],
    ['list after a cursor', listPicksSql({ after: cursor }, 51), 'picks_visible_kickoff_idx'],
    // A common sport may be read off the kickoff index and filtered: both are index paths in order.
    ['list by sport', listPicksSql({ sport: 'soccer' }, 51), /picks_visible_(sport_)?kickoff_idx/],
    ['list by league after a cursor', listPicksSql({ league: 'NBA', after: cursor }, 51), 'picks_visible_league_kickoff_idx'],
    ['today', todayPicksSql({}, now, 20), 'picks_visible_published_idx'],
    ['today by sport', todayPicksSql({ sport: 'tennis' }, now, 20), 'picks_visible_sport_published_idx'],
    ['track record', trackRecordSql(trackRecordWindow(now, 365), { sport: null, market: null }), 'picks_settled_at_idx'],
    // The record statistics read the picks of the window's two partial days (and of a day a settlement recomputes).
    ['record statistics of a day', settledRecordPicksSql({ from: new Date('2024-03-01T00:00:00Z'), to: new Date('2024-03-02T00:00:00Z') }, { sport: 'soccer', market: null }, { toExclusive: true }), 'picks_settled_at_idx'],
  ])('%s uses %s', async (_name, query, index) => {
    const text = await plan(query);
    expect(text, text).toMatch(index);
    expect(text).not.toContain('Seq Scan');
  });
});
