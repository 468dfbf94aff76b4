/**
 * The "Metrics" table of docs/OPERATIONS.md, between `<!-- metrics:start -->` and
 * `<!-- metrics:end -->`, rendered from the catalog (`npm run config:docs` writes it; a test
 * checks it is current).
 */
import { METRICS, type LabelValues, type MetricFamily } from './catalog.js';

export const METRICS_DOC = 'docs/OPERATIONS.md';

const GENERATED = '<!-- Generated from src/services/metrics/catalog.ts by `npm run config:docs`: edit it there, not here. -->';
const BLOCK = /(<!-- metrics:start -->\n)[\s\S]*?(<!-- metrics:end -->)/g;

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function labelCell(labels: Readonly<Record<string, LabelValues>>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return 'none';
  return entries.map(([name, values]) => `\`${name}\`: ${Array.isArray(values) ? values.map((value) => `\`${value}\``).join(', ') : (values as { boundedBy: string }).boundedBy}`).join('; ');
}

export function renderMetricsTable(families: Readonly<Record<string, MetricFamily>> = METRICS): string {
  const lines = ['| Metric | Type | Labels | Meaning |', '| --- | --- | --- | --- |'];
  for (const family of Object.values(families)) {
    const meaning = family.notes ? `${family.help} ${family.notes}` : family.help;
    lines.push(`| \`${family.name}\` | ${family.type} | ${cell(labelCell(family.labels))} | ${cell(meaning)} |`);
  }
  return `${GENERATED}\n\n${lines.join('\n')}`;
}

/** `markdown` with its metrics block regenerated. */
export function renderMetricsDocs(markdown: string): string {
  return markdown.replace(BLOCK, (_block, start: string, end: string) => `${start}${renderMetricsTable()}\n${end}`);
}
