/**
 * The public record page (docs/API.md, "Record page") through inject(), on a manual clock: the
 * figures this test computes itself from the picks it settles, the significance in words, the
 * three charts with their points and bars, the per-sport and per-market rows, only revealed picks
 * (a pick before its kickoff is absent), a withdrawn pick marked, the filters, 400 pages for bad
 * filters, the headers (CSP, cache, nothing from another host), HEAD and 405. Also the GraphQL
 * field behind the list and the page's pure text helpers.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrationBandLabel, clvBinLabel, niceTicks } from '../../adapters/record/charts.js';
import { formatPercent, formatSigned, formatUnits, selectionText, significanceVerdict } from '../../adapters/record/format.js';
import { significanceSentence } from '../../src/domain/record-statistics.js';
import { availabilitySentence } from '../../adapters/record/page.js';
import { RECORD_CACHE_CONTROL, RECORD_CONTENT_SECURITY_POLICY } from '../../adapters/record/plugin.js';
import { ManualClock } from '../../src/domain/clock.js';
import { findPicksForUpdate } from '../../src/persistence/picks-repository.js';
import { recordLedgerEntries } from '../../src/services/ledger.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { HOLD, PUBLISH, SETTLE, pickInput } from '../helpers/fixtures.js';
import { studentCdf } from '../helpers/student-t.js';


let t: TestApp;
const clock = new ManualClock('2026-12-10T12:00:00Z');

interface Planned {
  input: Record<string, unknown>;
  settle?: { result: 'won' | 'lost' | 'void'; closingOdds: number; settledAt: string };
}

/** The history: four settled picks (one void), one withdrawn before kickoff, one kicked off unsettled, one still ahead. */
const PLAN: Record<string, Planned> = {
  A: { input: { kickoffAt: '2026-12-11T15:00:00Z', odds: 2.2, referenceFairOdds: 2.0 }, settle: { result: 'won', closingOdds: 2.1, settledAt: '2026-12-11T23:00:00Z' } },
  B: {
    input: { homeTeam: 'Liverpool', awayTeam: 'Everton', market: 'totals', selection: 'Over', line: 2.5, odds: 1.95, referenceFairOdds: 1.85, kickoffAt: '2026-12-11T17:30:00Z' },
    settle: { result: 'lost', closingOdds: 2.0, settledAt: '2026-12-11T23:00:00Z' },
  },
  C: {
    input: { sport: 'basketball', league: 'NBA', homeTeam: 'Boston Celtics', awayTeam: 'Miami Heat', selection: 'Boston Celtics', odds: 1.5, referenceFairOdds: 1.4, kickoffAt: '2026-12-11T20:00:00Z' },
    settle: { result: 'won', closingOdds: 1.45, settledAt: '2026-12-13T11:00:00Z' },
  },
  D: {
    input: { sport: 'tennis', league: 'ATP Tour', homeTeam: 'Jannik Sinner', awayTeam: 'Carlos Alcaraz', selection: 'Carlos Alcaraz', odds: 2.5, referenceFairOdds: 2.3, kickoffAt: '2026-12-12T12:00:00Z' },
    settle: { result: 'void', closingOdds: 2.4, settledAt: '2026-12-13T11:00:00Z' },
  },
  E: { input: { homeTeam: 'Leeds', awayTeam: 'Burnley', selection: 'Draw', odds: 3.4, referenceFairOdds: 3.2, kickoffAt: '2026-12-11T19:00:00Z' } },
  F: { input: { homeTeam: 'Brentford', awayTeam: 'Fulham', selection: 'Fulham', odds: 3.77, referenceFairOdds: 3.5, kickoffAt: '2026-12-20T15:00:00Z' } },
  G: { input: { sport: 'basketball', league: 'NBA', homeTeam: 'Denver Nuggets', awayTeam: 'Phoenix Suns', selection: 'Phoenix Suns', odds: 2.1, referenceFairOdds: 1.9, kickoffAt: '2026-12-12T18:00:00Z' } },
};
const ids: Record<string, string> = {};

const profitOf = (result: string, odds: number) => (result === 'won' ? odds - 1 : result === 'lost' ? -1 : 0);
const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
const clvOf = (odds: number, closing: number) => 100 * (odds / closing - 1);

/** What the page must show for a set of settled picks, computed here from the plan. */
function expectedFigures(keys: readonly string[]) {
  const settled = keys.map((key) => ({ odds: PLAN[key]!.input.odds as number, ...PLAN[key]!.settle! }));
  const nonVoid = settled.filter((pick) => pick.result !== 'void');
  const profits = nonVoid.map((pick) => profitOf(pick.result, pick.odds));
  const n = profits.length;
  const mean = profits.reduce((sum, profit) => sum + profit, 0) / n;
  const sd = Math.sqrt(profits.reduce((sum, profit) => sum + (profit - mean) ** 2, 0) / (n - 1));
  const tScore = mean / (sd / Math.sqrt(n));
  const clvs = settled.map((pick) => clvOf(pick.odds, pick.closingOdds));
  return {
    roi_pct: round(100 * mean, 2),
    profit_units: round(profits.reduce((sum, profit) => sum + profit, 0), 2),
    total_settled: settled.length,
    win_rate: round((100 * nonVoid.filter((pick) => pick.result === 'won').length) / n, 2),
    avg_odds: round(nonVoid.reduce((sum, pick) => sum + pick.odds, 0) / n, 2),
    clv_avg_pct: round(clvs.reduce((sum, clv) => sum + clv, 0) / clvs.length, 2),
    clv_positive_pct: round((100 * clvs.filter((clv) => clv > 0).length) / clvs.length, 2),
    t_score: round(tScore, 2),
    p_value: round(1 - studentCdf(tScore, n - 1), 4),
    clvs,
  };
}

async function mutate(query: string, variables: Record<string, unknown>): Promise<{ id: string }> {
  const res = await t.graphql<Record<string, { id: string }>>(query, variables);
  expect(res.errors).toBeUndefined();
  return Object.values(res.data!)[0]!;
}

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

/** data-value of a figure on the page. */
function figure(body: string, key: string): string {
  const match = new RegExp(`data-figure="${key}" data-value="([^"]*)"`).exec(body);
  expect(match, key).not.toBeNull();
  return match![1]!;
}

/** The element with `id` up to its closing tag (the charts, the tables). */
function element(body: string, id: string, tag: string): string {
  const start = body.indexOf(`id="${id}"`);
  expect(start, id).toBeGreaterThan(-1);
  const end = body.indexOf(`</${tag}>`, start);
  return body.slice(body.lastIndexOf('<', start), end + tag.length + 3);
}

const rowsOf = (body: string) => [...element(body, 'revealed-picks', 'table').matchAll(/<tr data-pick-id="([^"]+)" data-withdrawn="(true|false)" data-result="([a-z_]+)"/g)].map((match) => ({ id: match[1]!, withdrawn: match[2] === 'true', result: match[3]! }));

beforeAll(async () => {
  t = await createTestApp({ clock });
  for (const [key, planned] of Object.entries(PLAN)) ids[key] = (await mutate(PUBLISH, { input: pickInput(planned.input) })).id;
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('GET /record before any kickoff', () => {
  it('lists no pick and gives none of them away', async () => {
    const res = await get('/record');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="revealed-picks-empty"');
    for (const key of Object.keys(PLAN)) expect(res.body).not.toContain(ids[key]!);
    for (const team of ['Arsenal', 'Liverpool', 'Boston Celtics', 'Leeds', 'Brentford']) expect(res.body).not.toContain(team);
    // Nothing settled: the figures are the API's zeros and nulls, the sentence says why there is no test.
    expect(figure(res.body, 'total_settled')).toBe('0');
    expect(figure(res.body, 'p_value')).toBe('');
    expect(res.body).toContain(significanceSentence(null));
    expect(res.body).toContain('id="no-settled"');
  });
});

describe('GET /record with a settled history', () => {
  let body = '';

  beforeAll(async () => {
    clock.set('2026-12-11T10:00:00Z');
    await mutate(HOLD, { id: ids.E }); // withdrawn before its kickoff at 19:00
    clock.set('2026-12-13T12:00:00Z');
    for (const key of ['A', 'B', 'C', 'D']) {
      const { result, closingOdds, settledAt } = PLAN[key]!.settle!;
      await mutate(SETTLE, { input: { id: ids[key], result: result.toUpperCase(), closingOdds, settledAt } });
    }
    const res = await get('/record');
    expect(res.statusCode).toBe(200);
    body = res.body;
  });

  it('says that no settled pick of the window was watched for availability: manual picks never are', () => {
    expect(body).toContain('<p class="availability-sentence" id="availability-sentence">No settled pick of this window was checked for availability after we sent it.</p>');
  });

  it('says which references priced the engine picks, and that manual picks have none', () => {
    // Every pick of this history was published by hand: no reference made its price.
    expect(body).toMatch(/<h2 id="references-title">Priced by<\/h2><\/div>\s*<p class="empty-note">No settled engine picks.<\/p>/);
  });

  it('shows the overall figures this test computes', () => {
    const expected = expectedFigures(['A', 'B', 'C', 'D']);
    for (const key of ['roi_pct', 'profit_units', 'total_settled', 'win_rate', 'avg_odds', 'clv_avg_pct', 'clv_positive_pct', 't_score', 'p_value'] as const) {
      expect(Number(figure(body, key)), key).toBeCloseTo(expected[key], 6);
    }
    // As people read them.
    expect(body).toContain(`<dd>${formatPercent(expected.roi_pct, { signed: true })}</dd>`);
    expect(body).toContain(`<dd>${formatUnits(expected.profit_units)}</dd>`);
    expect(body).toContain('<dd>+23.33 %</dd>');
    expect(body).toContain('<dd>66.67 %</dd>');
    // A (+1.2) and B (-1) settle at the same moment, C (+0.5) later: either order of A and B falls 1 unit
    // (1.2 to 0.2, or 0 to -1). In units of stake, as the API's max_drawdown_units.
    expect(figure(body, 'max_drawdown_units')).toBe('1');
    expect(body).toMatch(/data-figure="max_drawdown_units" data-value="1">\s*<dt>Largest drawdown<\/dt>\s*<dd>1\.00 unit<\/dd>/);
  });

  it('says the significance in plain words', () => {
    const { p_value: pValue } = expectedFigures(['A', 'B', 'C', 'D']);
    expect(pValue).toBeGreaterThan(0.35);
    expect(pValue).toBeLessThan(0.45);
    expect(body).toContain('If the picks had no edge, a record at least this good would happen about 4 times in 10.');
    expect(body).toContain(`(p = ${pValue.toFixed(4)}, t = ${expectedFigures(['A', 'B', 'C', 'D']).t_score.toFixed(2)})`);
    expect(body).toContain('Consistent with luck');
  });

  it('draws the cumulative profit with one point per day of the window', () => {
    const chart = element(body, 'chart-pnl', 'svg');
    expect(chart).toContain('data-points="31"');
    expect(chart).toMatch(/<title id="chart-pnl-title">/);
    expect(chart).toMatch(/<desc id="chart-pnl-desc">[^<]*\+0\.70 units at the end/);
    const points = /<polyline id="chart-pnl-line" class="pnl-line" points="([^"]+)"/.exec(chart)![1]!.split(' ');
    expect(points).toHaveLength(31);
    // The line ends higher than it starts (profit +0.70), and SVG's y grows downwards.
    expect(Number(points.at(-1)!.split(',')[1])).toBeLessThan(Number(points[0]!.split(',')[1]));
  });

  it('draws the CLV distribution as twelve bars with the picks of each bin', () => {
    const chart = element(body, 'chart-clv', 'svg');
    expect(chart).toContain('data-bars="12"');
    const bars = [...chart.matchAll(/<rect class="bar [^"]+"[^>]* data-picks="(\d+)"/g)].map((match) => Number(match[1]));
    expect(bars).toHaveLength(12);
    const edges = [-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10];
    const expected = new Array<number>(12).fill(0);
    for (const clv of expectedFigures(['A', 'B', 'C', 'D']).clvs) expected[edges.filter((edge) => clv >= edge).length]! += 1;
    expect(bars).toEqual(expected);
    expect(bars.reduce((sum, picks) => sum + picks, 0)).toBe(4);
  });

  it('draws the calibration chart: ten rows, a point per row with won or lost picks, and the diagonal', () => {
    const chart = element(body, 'chart-calibration', 'svg');
    expect(chart).toContain('data-rows="10"');
    // A (p 0.50) and B (p 0.54) in the 50-60 % row, C (p 0.71) in the 70-80 % row; the void D is not calibrated.
    const points = [...chart.matchAll(/<circle class="calibration-point"[^>]* data-picks="(\d+)"/g)].map((match) => Number(match[1]));
    expect(points).toEqual([2, 1]);
    expect(chart).toContain('data-points="2"');
    expect(chart).toContain('id="chart-calibration-diagonal"');
    expect(chart).toContain('Fair probability 50\u201360 %: 2 picks, expected 52.03 %, won 50.00 %');
  });

  it('has a row per sport and per market', () => {
    const sports = [...element(body, 'per-sport', 'table').matchAll(/<tr data-sport="([a-z]+)">/g)].map((match) => match[1]);
    expect(sports).toEqual(['basketball', 'soccer', 'tennis']);
    expect(element(body, 'per-sport', 'table')).toMatch(/<tr data-sport="tennis"><th scope="row">Tennis<\/th><td class="num">1<\/td><td class="num ">0\.00 %<\/td>/);
    const markets = [...element(body, 'per-market', 'table').matchAll(/<tr data-market="([a-z0-9]+)">/g)].map((match) => match[1]);
    expect(markets).toEqual(['h2h', 'totals']);
    expect(element(body, 'per-market', 'table')).toMatch(/<tr data-market="totals">.*<td class="num negative">\u2212100\.00 %<\/td>/);
  });

  it('lists the revealed picks newest kickoff first, each with its ledger entries; the withdrawn one marked; the one ahead absent', async () => {
    expect(rowsOf(body)).toEqual([
      { id: ids.G, withdrawn: false, result: 'pending' },
      { id: ids.D, withdrawn: false, result: 'void' },
      { id: ids.C, withdrawn: false, result: 'won' },
      { id: ids.E, withdrawn: true, result: 'withdrawn' },
      { id: ids.B, withdrawn: false, result: 'lost' },
      { id: ids.A, withdrawn: false, result: 'won' },
    ]);
    expect(body).not.toContain(ids.F!);
    expect(body).not.toContain('Brentford');
    expect(body).toContain('>Withdrawn</span>');
    expect(body).toContain('<span class="match">Liverpool v Everton</span>');
    expect(body).toContain(`<div class="cell">${selectionText('totals', 'Over', 2.5)}</div>`);

    // Each entry is the public ledger's: its seq, type and hash (shortened, whole in the title).
    const ledger = (await get('/api/public/ledger?limit=500')).json() as { entries: { seq: number; type: string; pick_id: string; hash: string }[] };
    for (const key of ['A', 'E']) {
      const entries = ledger.entries.filter((entry) => entry.pick_id === ids[key]);
      expect(entries.map((entry) => entry.type)).toEqual(key === 'A' ? ['pick.published', 'pick.settled'] : ['pick.published', 'pick.held']);
      const row = body.slice(body.indexOf(`data-pick-id="${ids[key]}"`), body.indexOf('</tr>', body.indexOf(`data-pick-id="${ids[key]}"`)));
      for (const entry of entries) {
        expect(row).toContain(`<li data-seq="${entry.seq}"><a href="/api/public/ledger?after=${entry.seq - 1}&amp;limit=1" title="This entry as JSON">#${entry.seq}</a> <span class="entry-type">${entry.type.slice(5)}</span> <code title="${entry.hash}">${entry.hash.slice(0, 10)}</code></li>`);
      }
    }
    // And how to check it, with the current head.
    const head = (await get('/api/public/ledger/head')).json() as { seq: number; hash: string };
    expect(body).toContain(`<strong id="ledger-head-seq">#${head.seq}</strong>`);
    expect(body).toContain(`<code class="hash" id="ledger-head-hash">${head.hash}</code>`);
    expect(body).toContain('npm run verify-ledger -- &lt;base_url&gt;');
    expect(body).toContain('<a href="/api/public/ledger/head">');
  });

  it('answers with its headers: HTML, a strict CSP, a short public cache, an ETag; nothing from another host', async () => {
    const res = await get('/record');
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(RECORD_CONTENT_SECURITY_POLICY);
    expect(RECORD_CONTENT_SECURITY_POLICY).toContain("default-src 'none'");
    expect(RECORD_CONTENT_SECURITY_POLICY).not.toMatch(/https?:|\*|unsafe/);
    expect(res.headers['cache-control']).toBe(RECORD_CACHE_CONTROL);
    expect(RECORD_CACHE_CONTROL).toMatch(/^public, max-age=\d{2,3}$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.body).not.toMatch(/https?:\/\/|\/\/cdn|src="\/\/|href="\/\//);
    expect(res.body).not.toMatch(/<script|<iframe|<img|@import|style="/);
    // Its stylesheet comes from here too, under a name carrying its content's hash, kept a year.
    const original = readFileSync(new URL('../../adapters/record/assets/record.css', import.meta.url));
    const stylesheet = `/record/assets/record.${createHash('sha256').update(original).digest('hex').slice(0, 16)}.css`;
    expect(res.body).toContain(`<link rel="stylesheet" href="${stylesheet}">`);
    const css = await get(stylesheet);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.rawPayload.equals(original)).toBe(true);
    expect(css.body).not.toMatch(/https?:|url\(|@import|@font-face/);
    expect((await get('/record/record.css')).statusCode).toBe(404);
    // Revalidation: the same page, the same ETag, 304 without a body.
    const etag = String(res.headers.etag);
    const again = await get('/record', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers HEAD like GET without a body, and 405 to other methods', async () => {
    const head = await t.app.inject({ method: 'HEAD', url: '/record' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.headers['cache-control']).toBe(RECORD_CACHE_CONTROL);
    expect(head.body).toBe('');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const res = await t.app.inject({ method, url: '/record' });
      expect(res.statusCode, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.json()).toMatchObject({ error: 'method_not_allowed' });
    }
  });

  it('filters by sport, market and window, the figures and the picks alike', async () => {
    const soccer = (await get('/record?sport=soccer')).body;
    const expectedSoccer = expectedFigures(['A', 'B']);
    expect(Number(figure(soccer, 'roi_pct'))).toBeCloseTo(expectedSoccer.roi_pct, 6);
    expect(figure(soccer, 'total_settled')).toBe('2');
    expect(rowsOf(soccer).map((row) => row.id)).toEqual([ids.E, ids.B, ids.A]);
    expect(soccer).toContain('<option value="soccer" selected>Soccer</option>');
    expect(soccer).toContain('id="scope">Soccer · all markets · settled in the last 30 days<');

    const totals = (await get('/record?market=totals')).body;
    expect(figure(totals, 'total_settled')).toBe('1');
    expect(figure(totals, 'roi_pct')).toBe('-100');
    expect(rowsOf(totals).map((row) => row.id)).toEqual([ids.B]);

    // Settled in the last day: C and D; kicked off in the last day (from 12 Dec 12:00): G and D.
    const lastDay = (await get('/record?days_back=1')).body;
    expect(figure(lastDay, 'total_settled')).toBe('2');
    expect(Number(figure(lastDay, 'roi_pct'))).toBeCloseTo(expectedFigures(['C', 'D']).roi_pct, 6);
    expect(element(lastDay, 'chart-pnl', 'svg')).toContain('data-points="2"');
    expect(rowsOf(lastDay).map((row) => row.id)).toEqual([ids.G, ids.D]);
    expect(lastDay).toContain('<option value="1" selected>Last 1 day</option>');

    // The form's "all" is an empty value: no filter.
    const all = (await get('/record?sport=&market=&days_back=')).body;
    expect(figure(all, 'total_settled')).toBe('4');
    expect(rowsOf(all)).toHaveLength(6);

    // Nothing matches: the empty states.
    const cricket = (await get('/record?sport=cricket')).body;
    expect(cricket).toContain('id="revealed-picks-empty"');
    expect(cricket).toContain('id="no-settled"');
  });

  it.each([
    ['/record?days_back=0', 'days_back must be an integer between 1 and 365', 'invalid_parameter'],
    ['/record?days_back=366', 'days_back must be an integer between 1 and 365', 'invalid_parameter'],
    ['/record?days_back=abc', 'days_back must be an integer between 1 and 365', 'invalid_parameter'],
    ['/record?days_back=7&days_back=30', 'days_back must be given at most once', 'invalid_parameter'],
    ['/record?sport=curling', 'sport must be one of: soccer, basketball, americanfootball, icehockey, baseball, tennis, esports, mma, boxing, rugbyunion, cricket', 'invalid_parameter'],
    ['/record?market=corners', 'market must be one of: h2h, spreads, totals', 'invalid_parameter'],
    ['/record?sport=%00', 'sport must not contain control characters (found U+0000 at position 0)', 'invalid_parameter'],
  ])('%s is a 400 page with the API’s code and message', async (url, message, code) => {
    const res = await get(url);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['x-error-code']).toBe(code);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-security-policy']).toBe(RECORD_CONTENT_SECURITY_POLICY);
    expect(res.body).toContain(`<div class="alert" role="alert" id="record-error" data-code="${code}"><strong>${message.replaceAll("'", '&#39;')}</strong>`);
    // The form comes back to fix it.
    expect(res.body).toContain('<form class="filters" method="get" action="/record"');
  });

  it('the same parameters are refused by the API with the same message', async () => {
    const res = await t.graphql('query($d: Int) { trackRecord(daysBack: $d) { overall { roiPct } } }', { d: 0 });
    expect(res.errors?.[0]).toMatchObject({ message: 'daysBack must be an integer between 1 and 365', extensions: { code: 'invalid_parameter' } });
  });
});

describe('links to the page', () => {
  it('from /docs (above the reference, under its nonce) and from every dashboard page', async () => {
    const docs = await get('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('<p class="record-link">Is it luck? The public <a href="/record">track record</a>');
    const nonce = /'nonce-([^']+)'/.exec(String(docs.headers['content-security-policy']))![1]!;
    expect(docs.body).toContain(`<style nonce="${nonce}">.record-link{`);
    const login = await get('/dashboard/login');
    expect(login.body).toContain('<a href="/docs/">API reference</a> · <a href="/record">Track record</a>');
  });
});

describe('revealedLedgerPicks (the GraphQL field behind the list)', () => {
  const QUERY = 'query($sport: String, $market: String, $d: Int, $n: Int) { revealedLedgerPicks(sport: $sport, market: $market, daysBack: $d, limit: $n) { pickId withdrawn entries { seq type pick salt } } }';
  type Answer = { revealedLedgerPicks: { pickId: string; withdrawn: boolean; entries: { seq: number; type: string; pick: string | null; salt: string | null }[] }[] };

  it('is anonymous, lists only kicked-off picks with their revealed entries, newest first, and honours the limit', async () => {
    const res = await t.graphql<Answer>(QUERY, { n: 3 }, null);
    expect(res.errors).toBeUndefined();
    const picks = res.data!.revealedLedgerPicks;
    expect(picks.map((pick) => pick.pickId)).toEqual([ids.G, ids.D, ids.C]);
    for (const pick of picks) {
      for (const entry of pick.entries) {
        expect(JSON.parse(entry.pick!)).toMatchObject({ id: pick.pickId });
        expect(entry.salt).toMatch(/^[0-9a-f]{64}$/);
      }
    }
    const everything = await t.graphql<Answer>(QUERY, {}, null);
    expect(everything.data!.revealedLedgerPicks.map((pick) => pick.pickId)).not.toContain(ids.F);
    expect(everything.data!.revealedLedgerPicks.find((pick) => pick.pickId === ids.E)).toMatchObject({ withdrawn: true, entries: [{ type: 'pick.published' }, { type: 'pick.held' }] });
  });

  it('refuses an unknown sport or market and an out-of-range limit', async () => {
    const sport = await t.graphql(QUERY, { sport: 'curling' }, null);
    expect(sport.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'sport' });
    const market = await t.graphql(QUERY, { market: 'corners' }, null);
    expect(market.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', parameter: 'market' });
    const limit = await t.graphql(QUERY, { n: 101 }, null);
    expect(limit.errors?.[0]).toMatchObject({ message: 'limit must be an integer between 1 and 100' });
  });
});

describe('a kickoff moved earlier', () => {
  it('shows the pick from its new kickoff, but an entry made before the move only from the kickoff that entry named', async () => {
    // As the value engine records a kickoff the feed moved: the new kickoff and a pick.rescheduled entry, in one transaction.
    const id = (await mutate(PUBLISH, { input: pickInput({ sport: 'icehockey', league: 'NHL', homeTeam: 'Edmonton Oilers', awayTeam: 'Florida Panthers', selection: 'Edmonton Oilers', kickoffAt: '2026-12-14T15:00:00Z' }) })).id;
    await t.runtime.orm.em.fork().transactional(async (em) => {
      const [pick] = await findPicksForUpdate(em, [id]);
      pick!.kickoffAt = new Date('2026-12-13T11:30:00Z');
      await recordLedgerEntries(em, 'pick.rescheduled', [pick!], clock.now());
    });
    const body = (await get('/record?sport=icehockey')).body;
    expect(rowsOf(body)).toEqual([{ id, withdrawn: false, result: 'pending' }]);
    const ledger = (await get('/api/public/ledger?limit=500')).json() as { entries: { seq: number; type: string; pick_id: string; pick?: unknown }[] };
    const [published, rescheduled] = ledger.entries.filter((entry) => entry.pick_id === id);
    // The public ledger still hides the entry that named the old kickoff, and so does the page.
    expect(published).toMatchObject({ type: 'pick.published' });
    expect(published!.pick).toBeUndefined();
    expect(rescheduled).toMatchObject({ type: 'pick.rescheduled', pick: { id, kickoff_at: '2026-12-13T11:30:00.000Z' } });
    expect(body).not.toContain(`data-seq="${published!.seq}"`);
    expect(body).toContain(`<li data-seq="${rescheduled!.seq}">`);
  });
});

describe('the page’s words and numbers', () => {
  it('says how long picks stayed on offer in plain words, a share in a word where one says it exactly', () => {
    expect(availabilitySentence({ trackedPicks: 40, availableAt5MinPct: 85, availableAt30MinPct: 50, medianMinutesAvailable: 34.5 })).toBe(
      'Half of our picks were still on offer at value 30 minutes after we sent them (or at kickoff, if sooner; 85.00 % after 5 minutes); the median pick stayed available 34.5 minutes.',
    );
    expect(availabilitySentence({ trackedPicks: 3, availableAt5MinPct: 100, availableAt30MinPct: 33.33, medianMinutesAvailable: 1 })).toBe(
      '33.33 % of our picks were still on offer at value 30 minutes after we sent them (or at kickoff, if sooner; 100.00 % after 5 minutes); the median pick stayed available 1.0 minute.',
    );
    expect(availabilitySentence({ trackedPicks: 1, availableAt5MinPct: 100, availableAt30MinPct: 100, medianMinutesAvailable: 60 })).toBe(
      'Our one pick was on offer at value 30 minutes after we sent it (or at kickoff, if sooner); it stayed available 60.0 minutes.',
    );
    expect(availabilitySentence({ trackedPicks: 0, availableAt5MinPct: null, availableAt30MinPct: null, medianMinutesAvailable: null })).toBe(
      'No settled pick of this window was checked for availability after we sent it.',
    );
  });

  it('gives a verdict only with a p-value', () => {
    expect(significanceVerdict(null)).toBeNull();
    expect(significanceVerdict(0.004)).toBe('Very unlikely to be luck alone');
    expect(significanceVerdict(0.03)).toBe('Unlikely to be luck alone');
    expect(significanceVerdict(0.12)).toBe('Could still be luck');
    expect(significanceVerdict(0.4)).toBe('Consistent with luck');
  });

  it('formats figures with a sign, a typographic minus and never "-0.00"', () => {
    expect(formatSigned(3.1)).toBe('+3.10');
    expect(formatSigned(-1)).toBe('\u22121.00');
    expect(formatSigned(-0.001)).toBe('0.00');
    expect(formatPercent(1234.5, { signed: true })).toBe('+1,234.50 %');
    expect(formatUnits(3.5)).toBe('+3.50 units');
    expect(formatUnits(-1)).toBe('\u22121.00 unit');
    expect(formatUnits(3.2, { signed: false })).toBe('3.20 units');
    expect(selectionText('spreads', 'Chelsea', 0.75)).toBe('Chelsea +0.75');
    expect(selectionText('spreads', 'Chelsea', -1.5)).toBe('Chelsea \u22121.5');
    expect(selectionText('totals', 'Under', 2.5)).toBe('Under 2.5');
    expect(selectionText('h2h', 'Draw', null)).toBe('Draw');
  });

  it('labels bins and bands, and picks round axis ticks', () => {
    expect(clvBinLabel({ lowPct: null, highPct: -10 })).toBe('below \u221210 %');
    expect(clvBinLabel({ lowPct: -2, highPct: 0 })).toBe('\u22122 % to 0 %');
    expect(clvBinLabel({ lowPct: 10, highPct: null })).toBe('10 % and above');
    expect(calibrationBandLabel({ low: 0.4, high: 0.5 })).toBe('40\u201350 %');
    expect(niceTicks(-1.3, 4.1, 4)).toEqual([-2, 0, 2, 4, 6]);
    expect(niceTicks(0, 7, 4, { integer: true })).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(0, 1, 4, { integer: true })).toEqual([0, 1]);
  });
});
