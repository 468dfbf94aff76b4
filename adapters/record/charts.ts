/**
 * The record page's three charts as inline SVG, drawn on the server: no script, no library, no
 * request. Each has a title and a description for assistive technology, a fixed id and its
 * counts in data attributes (data-points, data-bars, data-rows), and colours from the
 * stylesheet (classes), so the page's Content-Security-Policy needs no inline style.
 */
import type { TrackRecordQuery } from '../common/generated/graphql.js';
import { html, type SafeHtml } from '../dashboard/html.js';
import { formatDay, formatInteger, formatPercent, formatSigned, formatUnits, MINUS_SIGN } from './format.js';

type TrackRecordView = TrackRecordQuery['trackRecord'];
export type SeriesPoint = TrackRecordView['series'][number];
export type ClvBin = TrackRecordView['clvDistribution'][number];
export type CalibrationRow = TrackRecordView['calibration'][number];

/** Coordinates with one decimal: sharp enough on any screen, short in the page. */
const coordinate = (value: number) => String(Math.round(value * 10) / 10);

/** A step of 1, 2, 2.5 or 5 times a power of ten, about range / count. */
function niceStep(range: number, count: number): number {
  const raw = range / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].find((multiple) => multiple * power >= raw)!;
  return step * power;
}

/** Ticks covering [low, high] at a nice step, the ends rounded outwards. */
export function niceTicks(low: number, high: number, count: number, options: { integer?: boolean } = {}): number[] {
  let step = niceStep(high - low, count);
  if (options.integer) step = Math.max(1, Math.round(step));
  const first = Math.floor(low / step + 1e-9) * step;
  const last = Math.ceil(high / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let tick = first; tick <= last + step / 2; tick += step) ticks.push(Math.round(tick / step) * step);
  return ticks;
}

/** A plain number for an axis ("2", "2.5", "−1"): a minus sign, no trailing zeros. */
function axisNumber(value: number, signed = false): string {
  const text = String(Math.abs(Math.round(value * 100) / 100));
  if (value < 0 && text !== '0') return `${MINUS_SIGN}${text}`;
  return signed && value > 0 ? `+${text}` : text;
}

interface Frame {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}
const plotWidth = (frame: Frame) => frame.width - frame.left - frame.right;
const plotHeight = (frame: Frame) => frame.height - frame.top - frame.bottom;

const PNL_FRAME: Frame = { width: 720, height: 300, left: 66, right: 20, top: 18, bottom: 40 };

/** The cumulative profit in units, one point per day of the window (the API's series). */
export function pnlChart(series: readonly SeriesPoint[]): SafeHtml {
  const frame = PNL_FRAME;
  const units = series.map((point) => point.cumulativePnlUnits);
  const lowest = Math.min(0, ...units);
  const highest = Math.max(0, ...units);
  const ticks = highest - lowest < 1e-9 ? [-1, 0, 1] : niceTicks(lowest, highest, 4);
  const domainLow = ticks[0]!;
  const domainHigh = ticks.at(-1)!;
  const x = (index: number) => frame.left + (series.length <= 1 ? plotWidth(frame) / 2 : (index * plotWidth(frame)) / (series.length - 1));
  const y = (value: number) => frame.top + ((domainHigh - value) / (domainHigh - domainLow)) * plotHeight(frame);
  const points = units.map((value, index) => `${coordinate(x(index))},${coordinate(y(value))}`).join(' ');
  const zero = coordinate(y(0));
  const first = series[0];
  const last = series.at(-1);
  const middle = series.length > 2 ? series[Math.floor((series.length - 1) / 2)] : undefined;
  const end = units.at(-1) ?? 0;
  const description = first && last
    ? `Cumulative profit at flat 1-unit stakes, one point per day from ${formatDay(first.date)} to ${formatDay(last.date)}: ` +
      `${formatUnits(end)} at the end; highest ${formatUnits(highest)}, lowest ${formatUnits(lowest)}.`
    : 'No days in the window.';
  return html`<svg id="chart-pnl" class="chart chart-pnl" viewBox="0 0 ${frame.width} ${frame.height}" role="img" aria-labelledby="chart-pnl-title chart-pnl-desc" data-points="${series.length}">
<title id="chart-pnl-title">Cumulative profit (units)</title>
<desc id="chart-pnl-desc">${description}</desc>
${ticks.map(
  (tick) => html`<line class="grid" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${coordinate(y(tick))}" y2="${coordinate(y(tick))}"/>
<text class="tick tick-y" x="${frame.left - 8}" y="${coordinate(y(tick) + 4)}" text-anchor="end">${axisNumber(tick, true)}</text>`,
)}
${series.length > 0 ? html`<polygon class="pnl-area" points="${coordinate(x(0))},${zero} ${points} ${coordinate(x(series.length - 1))},${zero}"/>` : null}
<line class="zero" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${zero}" y2="${zero}"/>
<polyline id="chart-pnl-line" class="pnl-line" points="${points}" data-points="${series.length}"/>
${series.length > 0 ? html`<circle class="pnl-end" cx="${coordinate(x(series.length - 1))}" cy="${coordinate(y(end))}" r="4"><title>${formatDay(last!.date)}: ${formatUnits(end)}</title></circle>` : null}
${first ? html`<text class="tick tick-x" x="${frame.left}" y="${frame.height - 10}" text-anchor="start">${formatDay(first.date, { short: true })}</text>` : null}
${middle ? html`<text class="tick tick-x" x="${coordinate(x(Math.floor((series.length - 1) / 2)))}" y="${frame.height - 10}" text-anchor="middle">${formatDay(middle.date, { short: true })}</text>` : null}
${last && series.length > 1 ? html`<text class="tick tick-x" x="${frame.width - frame.right}" y="${frame.height - 10}" text-anchor="end">${formatDay(last.date, { short: true })}</text>` : null}
</svg>`;
}

/** A CLV bin as words: "−2 % to 0 %", "below −10 %", "10 % and above". */
export function clvBinLabel(bin: Pick<ClvBin, 'lowPct' | 'highPct'>): string {
  if (bin.lowPct === null || bin.lowPct === undefined) return `below ${axisNumber(bin.highPct ?? 0)} %`;
  if (bin.highPct === null || bin.highPct === undefined) return `${axisNumber(bin.lowPct)} % and above`;
  return `${axisNumber(bin.lowPct)} % to ${axisNumber(bin.highPct)} %`;
}

const CLV_FRAME: Frame = { width: 520, height: 270, left: 44, right: 12, top: 22, bottom: 46 };

/** Picks by closing-line value: one bar per bin of the API's clv_distribution (twelve). */
export function clvChart(bins: readonly ClvBin[]): SafeHtml {
  const frame = CLV_FRAME;
  const most = Math.max(0, ...bins.map((bin) => bin.picks));
  const ticks = niceTicks(0, Math.max(most, 1), 4, { integer: true });
  const top = ticks.at(-1)!;
  const slot = plotWidth(frame) / Math.max(bins.length, 1);
  const barWidth = slot * 0.78;
  const y = (count: number) => frame.top + ((top - count) / top) * plotHeight(frame);
  const baseline = frame.top + plotHeight(frame);
  const edgeX = (index: number) => frame.left + index * slot;
  const total = bins.reduce((sum, bin) => sum + bin.picks, 0);
  const zeroEdge = bins.findIndex((bin) => bin.lowPct === 0);
  const description = `${formatInteger(total)} picks with a closing line, by closing-line value: ${bins.map((bin) => `${clvBinLabel(bin)}: ${bin.picks}`).join('; ')}.`;
  return html`<svg id="chart-clv" class="chart chart-clv" viewBox="0 0 ${frame.width} ${frame.height}" role="img" aria-labelledby="chart-clv-title chart-clv-desc" data-bars="${bins.length}">
<title id="chart-clv-title">Closing-line value distribution</title>
<desc id="chart-clv-desc">${description}</desc>
${ticks.map(
  (tick) => html`<line class="grid" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${coordinate(y(tick))}" y2="${coordinate(y(tick))}"/>
<text class="tick tick-y" x="${frame.left - 8}" y="${coordinate(y(tick) + 4)}" text-anchor="end">${tick}</text>`,
)}
${bins.map((bin, index) => {
  const height = baseline - y(bin.picks);
  const positive = bin.lowPct !== null && bin.lowPct !== undefined && bin.lowPct >= 0;
  const barX = edgeX(index) + (slot - barWidth) / 2;
  return html`<rect class="bar ${positive ? 'bar-positive' : 'bar-negative'}" x="${coordinate(barX)}" y="${coordinate(baseline - height)}" width="${coordinate(barWidth)}" height="${coordinate(height)}" data-picks="${bin.picks}"><title>${clvBinLabel(bin)}: ${bin.picks} ${bin.picks === 1 ? 'pick' : 'picks'}</title></rect>
${bin.picks > 0 ? html`<text class="bar-count" x="${coordinate(barX + barWidth / 2)}" y="${coordinate(baseline - height - 5)}" text-anchor="middle">${bin.picks}</text>` : null}`;
})}
<line class="axis" x1="${frame.left}" x2="${frame.width - frame.right}" y1="${coordinate(baseline)}" y2="${coordinate(baseline)}"/>
${zeroEdge > 0 ? html`<line class="zero zero-vertical" x1="${coordinate(edgeX(zeroEdge))}" x2="${coordinate(edgeX(zeroEdge))}" y1="${frame.top}" y2="${coordinate(baseline)}"/>` : null}
${bins.map((bin, index) => {
  // Every other edge (−8, −4, 0, 4, 8) and the two open ends, so the labels stay legible on a phone.
  if (bin.lowPct === null || bin.lowPct === undefined) {
    return html`<text class="tick tick-x" x="${coordinate(edgeX(index) + slot / 2)}" y="${coordinate(baseline + 18)}" text-anchor="middle">&lt;${axisNumber(bin.highPct ?? 0)}</text>`;
  }
  if (bin.highPct === null || bin.highPct === undefined) {
    return html`<text class="tick tick-x" x="${coordinate(edgeX(index) + slot / 2)}" y="${coordinate(baseline + 18)}" text-anchor="middle">≥${axisNumber(bin.lowPct)}</text>`;
  }
  return bin.lowPct % 4 === 0 ? html`<text class="tick tick-x" x="${coordinate(edgeX(index))}" y="${coordinate(baseline + 18)}" text-anchor="middle">${axisNumber(bin.lowPct)}</text>` : null;
})}
<text class="axis-title" x="${coordinate(frame.left + plotWidth(frame) / 2)}" y="${frame.height - 6}" text-anchor="middle">CLV, % (our odds against the closing odds)</text>
</svg>`;
}

/** A calibration row's band as words: "40–50 %". */
export function calibrationBandLabel(row: Pick<CalibrationRow, 'low' | 'high'>): string {
  return `${Math.round(row.low * 100)}\u2013${Math.round(row.high * 100)} %`;
}

const CALIBRATION_FRAME: Frame = { width: 380, height: 372, left: 52, right: 16, top: 16, bottom: 56 };
const CALIBRATION_TICKS = [0, 25, 50, 75, 100];

/**
 * Expected against actual win rate per band of fair probability (the API's ten calibration rows),
 * one point per band with picks, its area by the band's picks; the diagonal is perfect calibration.
 */
export function calibrationChart(rows: readonly CalibrationRow[]): SafeHtml {
  const frame = CALIBRATION_FRAME;
  const size = Math.min(plotWidth(frame), plotHeight(frame));
  const x = (percent: number) => frame.left + (percent / 100) * size;
  const y = (percent: number) => frame.top + ((100 - percent) / 100) * size;
  const filled = rows.filter((row): row is CalibrationRow & { expectedWinRate: number; actualWinRate: number } => row.picks > 0 && row.expectedWinRate != null && row.actualWinRate != null);
  const most = Math.max(1, ...filled.map((row) => row.picks));
  const radius = (picks: number) => 3.5 + 8 * Math.sqrt(picks / most);
  const description = filled.length === 0
    ? 'No won or lost picks in the window yet.'
    : `Expected against actual win rate by band of fair probability at publication; the diagonal is perfect calibration. ${filled
        .map((row) => `${calibrationBandLabel(row)}: ${row.picks} picks, expected ${formatPercent(row.expectedWinRate)}, won ${formatPercent(row.actualWinRate)}`)
        .join('; ')}.`;
  return html`<svg id="chart-calibration" class="chart chart-calibration" viewBox="0 0 ${frame.width} ${frame.height}" role="img" aria-labelledby="chart-calibration-title chart-calibration-desc" data-rows="${rows.length}" data-points="${filled.length}">
<title id="chart-calibration-title">Calibration: expected against actual win rate</title>
<desc id="chart-calibration-desc">${description}</desc>
${CALIBRATION_TICKS.map(
  (tick) => html`<line class="grid" x1="${x(0)}" x2="${x(100)}" y1="${coordinate(y(tick))}" y2="${coordinate(y(tick))}"/>
<line class="grid" x1="${coordinate(x(tick))}" x2="${coordinate(x(tick))}" y1="${y(100)}" y2="${y(0)}"/>
<text class="tick tick-y" x="${frame.left - 8}" y="${coordinate(y(tick) + 4)}" text-anchor="end">${tick}</text>
<text class="tick tick-x" x="${coordinate(x(tick))}" y="${coordinate(y(0) + 18)}" text-anchor="middle">${tick}</text>`,
)}
<line id="chart-calibration-diagonal" class="diagonal" x1="${x(0)}" y1="${y(0)}" x2="${x(100)}" y2="${y(100)}"><title>Perfect calibration: won as often as expected</title></line>
${filled.length > 1 ? html`<polyline class="calibration-line" points="${filled.map((row) => `${coordinate(x(row.expectedWinRate))},${coordinate(y(row.actualWinRate))}`).join(' ')}"/>` : null}
${filled.map(
  (row) => html`<circle class="calibration-point" cx="${coordinate(x(row.expectedWinRate))}" cy="${coordinate(y(row.actualWinRate))}" r="${coordinate(radius(row.picks))}" data-picks="${row.picks}"><title>Fair probability ${calibrationBandLabel(row)}: ${row.picks} ${row.picks === 1 ? 'pick' : 'picks'}, expected ${formatPercent(row.expectedWinRate)}, won ${formatPercent(row.actualWinRate)} (${formatSigned(row.actualWinRate - row.expectedWinRate)} points)</title></circle>`,
)}
<text class="axis-title" x="${coordinate(x(50))}" y="${frame.height - 24}" text-anchor="middle">Expected win rate, % (fair probability)</text>
<text class="axis-note" x="${coordinate(x(50))}" y="${frame.height - 8}" text-anchor="middle">won and lost picks only</text>
<text class="axis-title" transform="rotate(-90)" x="${coordinate(-y(50))}" y="14" text-anchor="middle">Actual win rate, %</text>
</svg>`;
}
