/**
 * The public record page's HTML (docs/API.md, "Record page"), rendered on the server from the
 * results of its two documents. Every value goes through html`` (escaped); the charts are inline
 * SVG (./charts.ts); styles come from the stylesheets the app serves (the page's own and the base
 * every page shares), so nothing inline needs the Content-Security-Policy's permission and nothing
 * is fetched from another host.
 */
import type { CommittedPick } from '../../src/domain/ledger.js';
import { MARKETS } from '../../src/domain/market.js';
import { SPORT_SLUGS } from '../../src/domain/sports.js';
import type { RecordLedgerQuery, TrackRecordQuery } from '../common/generated/graphql.js';
import { BASE_STYLESHEET_PATH, FAVICON_PATH, LOGO } from '../dashboard/brand.js';
import { html, type SafeHtml } from '../dashboard/html.js';
import { calibrationBandLabel, calibrationChart, clvBinLabel, clvChart, pnlChart } from './charts.js';
import {
  entryTypeName,
  formatDateTime,
  formatInteger,
  formatNumber,
  formatPercent,
  formatUnits,
  marketName,
  orNotAvailable,
  resultName,
  selectionText,
  shortHash,
  significanceVerdict,
  sportName,
  windowName,
} from './format.js';
import { significanceSentence } from '../../src/domain/record-statistics.js';
import { STYLESHEET_PATH } from './stylesheet.js';

export const RECORD_PATH = '/record';
const LEDGER_PATH = '/api/public/ledger';

/** The windows the form offers; any other valid days_back is added to the list when asked for. */
export const WINDOW_CHOICES: readonly number[] = [7, 30, 90, 180, 365];

export interface RecordFilters {
  sport: string | null;
  market: string | null;
  daysBack: number;
}

type TrackRecordView = TrackRecordQuery['trackRecord'];
type RevealedPickView = RecordLedgerQuery['revealedLedgerPicks'][number];
type LedgerHeadView = RecordLedgerQuery['ledgerHead'];

export interface RecordPageData {
  filters: RecordFilters;
  record: TrackRecordView;
  picks: readonly RevealedPickView[];
  head: LedgerHeadView;
}

/** The page's own stylesheet, then the base every page shares (its cascade layer loses to the page's rules whatever the order). */
function layout(title: string, body: SafeHtml): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="referrer" content="same-origin">
<meta name="description" content="Every published pick, settled at flat 1-unit stakes, with its significance and a public ledger anyone can verify.">
<title>${title} · Picks API</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="stylesheet" href="${BASE_STYLESHEET_PATH}">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <div class="container topbar-inner">
    <a class="brand" href="${RECORD_PATH}">${LOGO}<span>Picks API</span><span class="brand-sub">Track record</span></a>
    <nav class="topnav" aria-label="Site">
      <a href="/docs/">API reference</a>
      <a href="/dashboard">Dashboard</a>
    </nav>
  </div>
</header>
<main id="main" class="container" tabindex="-1">
${body}
</main>
<footer class="footer container">
  <p>Flat 1-unit stakes on every pick; times are UTC. Figures as the API's <code>GET /api/v1/track-record</code> gives them; the picks from the public ledger (<code>${LEDGER_PATH}</code>).</p>
</footer>
</body>
</html>`.value}`;
}

function filtersForm(filters: RecordFilters): SafeHtml {
  const windows = [...new Set([...WINDOW_CHOICES, filters.daysBack])].sort((a, b) => a - b);
  return html`<form class="filters" method="get" action="${RECORD_PATH}" aria-label="Filter the record">
  <div class="field">
    <label for="filter-sport">Sport</label>
    <select id="filter-sport" name="sport">
      <option value=""${filters.sport === null ? html` selected` : null}>All sports</option>
      ${SPORT_SLUGS.map((slug) => html`<option value="${slug}"${filters.sport === slug ? html` selected` : null}>${sportName(slug)}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="filter-market">Market</label>
    <select id="filter-market" name="market">
      <option value=""${filters.market === null ? html` selected` : null}>All markets</option>
      ${MARKETS.map((code) => html`<option value="${code}"${filters.market === code ? html` selected` : null}>${marketName(code)} (${code})</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="filter-days">Window</label>
    <select id="filter-days" name="days_back">
      ${windows.map((days) => html`<option value="${days}"${filters.daysBack === days ? html` selected` : null}>Last ${formatInteger(days)} ${days === 1 ? 'day' : 'days'}</option>`)}
    </select>
  </div>
  <div class="field field-actions">
    <button type="submit" class="btn btn-primary">Apply</button>
    <a class="btn btn-ghost" href="${RECORD_PATH}">Reset</a>
  </div>
</form>`;
}

/** "Soccer · h2h · settled in the last 30 days". */
function scopeText(filters: RecordFilters): string {
  return [filters.sport === null ? 'All sports' : sportName(filters.sport), filters.market === null ? 'all markets' : filters.market, `settled in ${windowName(filters.daysBack)}`].join(' · ');
}

interface Figure {
  key: string;
  label: string;
  value: number | readonly number[] | null;
  text: string;
  note?: string;
}

function figures(record: TrackRecordView): Figure[] {
  const overall = record.overall;
  const profit = record.series.at(-1)?.cumulativePnlUnits ?? 0;
  return [
    { key: 'roi_pct', label: 'ROI', value: overall.roiPct, text: formatPercent(overall.roiPct, { signed: true }), note: 'Profit per unit staked, voids left out' },
    { key: 'profit_units', label: 'Profit', value: profit, text: formatUnits(profit), note: 'At 1 unit a pick' },
    { key: 'total_settled', label: 'Settled picks', value: overall.totalSettled, text: formatInteger(overall.totalSettled), note: 'Voids included' },
    { key: 'win_rate', label: 'Win rate', value: overall.winRate, text: formatPercent(overall.winRate), note: 'Half wins count, voids left out' },
    { key: 'avg_odds', label: 'Average odds', value: overall.avgOdds ?? null, text: orNotAvailable(overall.avgOdds, (odds) => formatNumber(odds)) },
    { key: 'edge_avg_pct', label: 'Average edge', value: overall.edgeAvgPct, text: formatPercent(overall.edgeAvgPct, { signed: true }), note: 'Against the fair odds at publication' },
    {
      key: 'clv_avg_pct',
      label: 'Average CLV',
      value: overall.clvAvgPct,
      text: formatPercent(overall.clvAvgPct, { signed: true }),
      note: `Over ${formatInteger(overall.clvCount)} ${overall.clvCount === 1 ? 'pick' : 'picks'} with a closing line`,
    },
    { key: 'clv_positive_pct', label: 'Beat the close', value: overall.clvPositivePct ?? null, text: orNotAvailable(overall.clvPositivePct, (pct) => formatPercent(pct)), note: 'Picks with a positive CLV' },
    {
      key: 'roi_ci95',
      label: 'ROI, 95 % interval',
      value: overall.roiCi95 ?? null,
      text: orNotAvailable(overall.roiCi95, ([low, high]) => `${formatPercent(low!, { signed: true })} to ${formatPercent(high!, { signed: true })}`),
    },
    { key: 't_score', label: 't-score', value: overall.tScore ?? null, text: orNotAvailable(overall.tScore, (t) => formatNumber(t)) },
    { key: 'p_value', label: 'p-value', value: overall.pValue ?? null, text: orNotAvailable(overall.pValue, (p) => formatNumber(p, 4)), note: 'One-sided; no edge as the null hypothesis' },
    { key: 'max_drawdown_units', label: 'Largest drawdown', value: overall.maxDrawdownUnits, text: formatUnits(overall.maxDrawdownUnits, { signed: false }), note: 'Fall from a running peak' },
    {
      key: 'longest_losing_streak',
      label: 'Longest losing run',
      value: overall.longestLosingStreak,
      text: `${formatInteger(overall.longestLosingStreak)} ${overall.longestLosingStreak === 1 ? 'pick' : 'picks'}`,
    },
    { key: 'brier_score', label: 'Brier score', value: overall.brierScore ?? null, text: orNotAvailable(overall.brierScore, (score) => formatNumber(score, 4)), note: 'Lower is better; 0.25 is a coin flip' },
  ];
}

function figureList(record: TrackRecordView): SafeHtml {
  return html`<dl class="figures" id="figures">
${figures(record).map(
  (figure) => html`<div class="figure" data-figure="${figure.key}" data-value="${Array.isArray(figure.value) ? figure.value.join(',') : figure.value}">
  <dt>${figure.label}</dt>
  <dd>${figure.text}</dd>
  ${figure.note ? html`<dd class="figure-note">${figure.note}</dd>` : null}
</div>`,
)}
</dl>`;
}

function significance(record: TrackRecordView): SafeHtml {
  const { pValue, tScore } = record.overall;
  const verdict = significanceVerdict(pValue ?? null);
  const strength = pValue == null ? 'none' : pValue < 0.05 ? 'strong' : pValue < 0.2 ? 'weak' : 'luck';
  return html`<section class="card significance significance-${strength}" aria-labelledby="significance-title">
  <h2 id="significance-title">Is it luck?</h2>
  <p class="significance-sentence" id="significance-sentence">${significanceSentence(pValue ?? null)}</p>
  ${verdict ? html`<p class="verdict">${verdict}${pValue != null ? html` <span class="muted">(p = ${formatNumber(pValue, 4)}${tScore != null ? `, t = ${formatNumber(tScore)}` : ''})</span>` : null}</p>` : null}
  <p class="small muted">A one-sided t-test of the profit per pick at flat stakes, assuming independent picks. It says how surprising the record would be without an edge, not how big the edge is; with a few dozen picks even a real edge rarely gets below 5 times in 100, which is why the closing-line value stands beside it.</p>
</section>`;
}

function sportTable(record: TrackRecordView): SafeHtml {
  if (record.perSport.length === 0) return html`<p class="empty-note">No settled picks.</p>`;
  return html`<div class="table-wrap"><table class="data-table" id="per-sport">
<caption class="visually-hidden">Per sport</caption>
<thead><tr><th scope="col">Sport</th><th scope="col" class="num">Settled</th><th scope="col" class="num">ROI</th></tr></thead>
<tbody>
${record.perSport.map(
  (row) => html`<tr data-sport="${row.sport}"><th scope="row">${sportName(row.sport)}</th><td class="num">${formatInteger(row.totalSettled)}</td><td class="num ${tone(row.roiPct)}">${formatPercent(row.roiPct, { signed: true })}</td></tr>`,
)}
</tbody></table></div>`;
}

function marketTable(record: TrackRecordView): SafeHtml {
  if (record.perMarket.length === 0) return html`<p class="empty-note">No settled picks.</p>`;
  return html`<div class="table-wrap"><table class="data-table" id="per-market">
<caption class="visually-hidden">Per market</caption>
<thead><tr><th scope="col">Market</th><th scope="col" class="num">Settled</th><th scope="col" class="num">ROI</th><th scope="col" class="num">Average CLV</th></tr></thead>
<tbody>
${record.perMarket.map(
  (row) => html`<tr data-market="${row.market}"><th scope="row">${marketName(row.market)} <span class="muted">(${row.market})</span></th><td class="num">${formatInteger(row.totalSettled)}</td><td class="num ${tone(row.roiPct)}">${formatPercent(row.roiPct, { signed: true })}</td><td class="num">${formatPercent(row.clvAvgPct, { signed: true })}</td></tr>`,
)}
</tbody></table></div>`;
}

const tone = (value: number) => (value > 0 ? 'positive' : value < 0 ? 'negative' : '');

/** Which sharp references made the fair prices: what the record rests on since Pinnacle left public feeds. */
function referenceTable(record: TrackRecordView): SafeHtml {
  if (record.referenceCoverage.length === 0) return html`<p class="empty-note">No settled engine picks.</p>`;
  return html`<p class="muted small">The sharp prices our fair odds came from: a pick priced by several counts for each.</p>
<div class="table-wrap"><table class="data-table" id="reference-coverage">
<caption class="visually-hidden">Priced by</caption>
<thead><tr><th scope="col">Reference</th><th scope="col" class="num">Engine picks</th><th scope="col" class="num">Share</th></tr></thead>
<tbody>
${record.referenceCoverage.map(
  (row) => html`<tr data-reference="${row.bookmaker}"><th scope="row">${row.bookmaker}</th><td class="num">${formatInteger(row.picks)}</td><td class="num">${formatPercent(row.sharePct)}</td></tr>`,
)}
</tbody></table></div>`;
}

/**
 * How long the picks stayed bettable, in plain words: "Half of our picks were still on offer at
 * value 30 minutes after we sent them".
 */
export function availabilitySentence(availability: TrackRecordView['availability']): string {
  const { trackedPicks, availableAt5MinPct, availableAt30MinPct, medianMinutesAvailable } = availability;
  if (trackedPicks === 0 || availableAt5MinPct === null || availableAt30MinPct === null || medianMinutesAvailable === null) {
    return 'No settled pick of this window was checked for availability after we sent it.';
  }
  const median = `${formatNumber(medianMinutesAvailable, 1)} ${medianMinutesAvailable === 1 ? 'minute' : 'minutes'}`;
  if (trackedPicks === 1) {
    return `Our one pick ${availableAt30MinPct === 100 ? 'was' : 'was no longer'} on offer at value 30 minutes after we sent it (or at kickoff, if sooner); it stayed available ${median}.`;
  }
  const share = shareInWords(availableAt30MinPct);
  return (
    `${share.charAt(0).toUpperCase()}${share.slice(1)} of our picks were still on offer at value 30 minutes after we sent them (or at kickoff, if sooner; ` +
    `${formatPercent(availableAt5MinPct)} after 5 minutes); the median pick stayed available ${median}.`
  );
}

/** A share in words where a word says it exactly, else in percent. */
function shareInWords(pct: number): string {
  const words: Record<number, string> = { 0: 'none', 25: 'a quarter', 50: 'half', 75: 'three quarters', 100: 'all' };
  return words[pct] ?? formatPercent(pct);
}

function clvTable(record: TrackRecordView): SafeHtml {
  return html`<details class="numbers"><summary>The numbers</summary><div class="table-wrap"><table class="data-table compact">
<thead><tr><th scope="col">CLV</th><th scope="col" class="num">Picks</th></tr></thead>
<tbody>${record.clvDistribution.map((bin) => html`<tr><th scope="row">${clvBinLabel(bin)}</th><td class="num">${formatInteger(bin.picks)}</td></tr>`)}</tbody>
</table></div></details>`;
}

function calibrationTable(record: TrackRecordView): SafeHtml {
  return html`<details class="numbers"><summary>The numbers</summary><div class="table-wrap"><table class="data-table compact">
<thead><tr><th scope="col">Fair probability</th><th scope="col" class="num">Picks</th><th scope="col" class="num">Expected</th><th scope="col" class="num">Won</th></tr></thead>
<tbody>${record.calibration.map(
    (row) =>
      html`<tr><th scope="row">${calibrationBandLabel(row)}</th><td class="num">${formatInteger(row.picks)}</td><td class="num">${orNotAvailable(row.expectedWinRate, (rate) => formatPercent(rate))}</td><td class="num">${orNotAvailable(row.actualWinRate, (rate) => formatPercent(rate))}</td></tr>`,
  )}</tbody>
</table></div></details>`;
}

/** The committed pick of an entry (canonical JSON); null before its reveal (never listed here). */
function committedPickOf(entry: RevealedPickView['entries'][number]): CommittedPick | null {
  return entry.pick == null ? null : (JSON.parse(entry.pick) as CommittedPick);
}

function pickRow(item: RevealedPickView): SafeHtml {
  // The latest revealed entry holds the pick as it stands (its result once settled).
  const latest = [...item.entries].reverse().map(committedPickOf).find((pick) => pick !== null) ?? null;
  if (latest === null) return html``;
  const result = item.withdrawn ? 'withdrawn' : (latest.result ?? 'pending');
  const resultBadge = item.withdrawn
    ? html`<span class="badge badge-withdrawn" title="Held before kickoff: its last ledger entry is pick.held. It stays on the record.">Withdrawn</span>`
    : html`<span class="badge badge-${result}">${resultName(latest.result)}</span>`;
  const entries = html`<ol class="entries">${item.entries.map(
    (entry) =>
      html`<li data-seq="${entry.seq}"><a href="${`${LEDGER_PATH}?after=${entry.seq - 1}&limit=1`}" title="This entry as JSON">#${entry.seq}</a> <span class="entry-type">${entryTypeName(entry.type)}</span> <code title="${entry.hash}">${shortHash(entry.hash)}</code></li>`,
  )}</ol>`;
  return html`<tr data-pick-id="${item.pickId}" data-withdrawn="${String(item.withdrawn)}" data-result="${result}"${item.withdrawn ? html` class="is-withdrawn"` : null}>
  ${cell('Kickoff', html`<time datetime="${latest.kickoff_at}">${formatDateTime(latest.kickoff_at)}</time>`)}
  ${cell('Match', html`<span class="match">${latest.home_team} v ${latest.away_team}</span><span class="sub">${latest.league} · ${sportName(latest.sport)}</span>`)}
  ${cell('Market', latest.market)}
  ${cell('Selection', selectionText(latest.market, latest.selection, latest.line))}
  ${cell('Odds', html`${formatNumber(latest.odds)}${latest.closing_odds != null ? html`<span class="sub">close ${formatNumber(latest.closing_odds)}</span>` : null}`, 'num')}
  ${cell('Result', resultBadge)}
  ${cell('Ledger', entries)}
</tr>`;
}

/** A cell with its column's name for the phone layout (one card per pick), its content in one box. */
function cell(label: string, content: unknown, className?: string): SafeHtml {
  return html`<td data-label="${label}"${className ? html` class="${className}"` : null}><div class="cell">${content}</div></td>`;
}

function picksTable(picks: readonly RevealedPickView[], filters: RecordFilters): SafeHtml {
  if (picks.length === 0) return html`<p class="empty-note" id="revealed-picks-empty">No pick kicked off in ${windowName(filters.daysBack)}${filters.sport || filters.market ? ' for this filter' : ''}.</p>`;
  return html`<div class="table-wrap"><table class="data-table picks-table" id="revealed-picks" data-rows="${picks.length}">
<caption class="visually-hidden">The latest revealed picks, newest kickoff first</caption>
<thead><tr><th scope="col">Kickoff</th><th scope="col">Match</th><th scope="col">Market</th><th scope="col">Selection</th><th scope="col" class="num">Odds</th><th scope="col">Result</th><th scope="col">Ledger entries</th></tr></thead>
<tbody>
${picks.map(pickRow)}
</tbody></table></div>`;
}

function verifySection(head: LedgerHeadView): SafeHtml {
  return html`<section class="card" id="verify" aria-labelledby="verify-title">
  <h2 id="verify-title">Check it yourself</h2>
  <p>Every pick is an entry of a public, append-only hash chain, written when the pick was published and before anyone could see it. Until kickoff an entry shows only a salted commitment (a hash) of the pick; from kickoff on it shows the pick and its salt, so anyone can recompute the hash: the odds, the selection and the line were fixed before the match. Each entry's hash covers the one before it, so no pick can be edited, back-dated, reordered or dropped without breaking every later hash.</p>
  <ol class="steps">
    <li>Run the verifier (Node 20 or later, nothing else): from a checkout of the service, <code>npm run verify-ledger -- &lt;base_url&gt;</code>, or <code>node docs/examples/verify-ledger.mjs &lt;base_url&gt;</code>, where <code>&lt;base_url&gt;</code> is this site's address. It downloads the whole chain and checks every hash, every revealed commitment and every settled result against its final score.</li>
    <li>Or read the ledger yourself: <a href="${LEDGER_PATH}?limit=500"><code>GET ${LEDGER_PATH}</code></a> (pages of up to 500 entries; ask again with <code>after=next_after</code>), <a href="${LEDGER_PATH}/head"><code>GET ${LEDGER_PATH}/head</code></a> and <a href="${LEDGER_PATH}/checkpoints"><code>GET ${LEDGER_PATH}/checkpoints</code></a> (the head at every midnight UTC).</li>
    <li>Keep the head: it is your anchor. ${
      head
        ? html`Now it is entry <strong id="ledger-head-seq">#${head.seq}</strong>, hash <code class="hash" id="ledger-head-hash">${head.hash}</code> (${formatDateTime(head.at)}). A later run with <code>--anchor ${head.seq}:${head.hash}</code> proves this history was not rewritten since.`
        : html`The ledger is empty so far.`
    }</li>
  </ol>
</section>`;
}

export function recordPage(data: RecordPageData): string {
  const { record, filters } = data;
  const settled = record.overall.totalSettled;
  return layout(
    'Track record',
    html`<div class="page-head">
  <div>
    <h1>Track record</h1>
    <p class="lead">Every pick we published, settled at flat 1-unit stakes, and a public ledger to check it against. <span class="scope" id="scope">${scopeText(filters)}</span></p>
  </div>
</div>
${filtersForm(filters)}
${significance(record)}
${settled === 0 ? html`<p class="empty-note" id="no-settled">No pick was settled in ${windowName(filters.daysBack)}${filters.sport || filters.market ? ' for this filter' : ''}.</p>` : null}
<section aria-labelledby="figures-title">
  <h2 id="figures-title" class="visually-hidden">The figures</h2>
  ${figureList(record)}
</section>
<section class="card" aria-labelledby="pnl-title">
  <div class="card-head"><h2 id="pnl-title">Cumulative profit</h2><span class="muted small">Units, one point per day</span></div>
  <div class="chart-box">${pnlChart(record.series)}</div>
</section>
<div class="grid-2">
  <section class="card" aria-labelledby="clv-title">
    <div class="card-head"><h2 id="clv-title">Closing-line value</h2><span class="muted small">${orNotAvailable(record.overall.clvPositivePct, (pct) => `${formatPercent(pct)} beat the close`)}</span></div>
    <p class="small muted">How much better our odds were than the market's last price before kickoff. Beating the close consistently is the surest sign of an edge: it shows within a few hundred picks, long before profit does.</p>
    <div class="chart-box">${clvChart(record.clvDistribution)}</div>
    ${clvTable(record)}
  </section>
  <section class="card" aria-labelledby="calibration-title">
    <div class="card-head"><h2 id="calibration-title">Calibration</h2><span class="muted small">Brier score ${orNotAvailable(record.overall.brierScore, (score) => formatNumber(score, 4))}</span></div>
    <p class="small muted">Do picks the model rated at 40 % win about 40 % of the time? Points on the diagonal are well calibrated; the bigger the point, the more picks.</p>
    <div class="chart-box chart-box-square">${calibrationChart(record.calibration)}</div>
    ${calibrationTable(record)}
  </section>
</div>
<div class="grid-2">
  <section class="card" aria-labelledby="sport-title">
    <div class="card-head"><h2 id="sport-title">Per sport</h2></div>
    ${sportTable(record)}
  </section>
  <section class="card" aria-labelledby="market-title">
    <div class="card-head"><h2 id="market-title">Per market</h2></div>
    ${marketTable(record)}
  </section>
</div>
<section class="card" aria-labelledby="references-title">
  <div class="card-head"><h2 id="references-title">Priced by</h2></div>
  ${referenceTable(record)}
</section>
<section class="card" aria-labelledby="availability-title">
  <div class="card-head"><h2 id="availability-title">Still on offer</h2><span class="muted small">${formatInteger(record.availability.trackedPicks)} engine ${record.availability.trackedPicks === 1 ? 'pick' : 'picks'} checked</span></div>
  <p class="availability-sentence" id="availability-sentence">${availabilitySentence(record.availability)}</p>
  <p class="small muted">After a pick is sent, the engine reads its bookmaker's price at every odds poll until kickoff: a pick is available while that price still beats the fair price by the minimum edge. How long picks stay available is how long you have to place them.</p>
</section>
<section class="card" aria-labelledby="picks-title">
  <div class="card-head"><h2 id="picks-title">Latest revealed picks</h2><span class="muted small">Kicked off in ${windowName(filters.daysBack)}, newest first; ${formatInteger(data.picks.length)} shown</span></div>
  <p class="small muted">Straight from the public ledger: a pick appears here once its match has kicked off, with every entry the ledger holds for it. A pick withdrawn before kickoff stays on the record and is marked.</p>
  ${picksTable(data.picks, filters)}
</section>
${verifySection(data.head)}`,
  );
}

export interface RecordErrorView {
  status: number;
  code: string;
  message: string;
  filters: RecordFilters;
}

export function recordErrorPage(view: RecordErrorView): string {
  const title = view.status >= 500 ? 'Something went wrong' : 'That did not work';
  return layout(
    title,
    html`<div class="page-head"><div><h1>${title}</h1></div></div>
<div class="alert" role="alert" id="record-error" data-code="${view.code}"><strong>${view.message}</strong> <span class="muted">(${view.code})</span></div>
${view.status < 500 ? filtersForm(view.filters) : null}
<p><a href="${RECORD_PATH}">Back to the track record</a></p>`,
  );
}
