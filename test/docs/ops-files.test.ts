/**
 * The Grafana dashboard (docs/ops/grafana-dashboard.json) and the Prometheus alert rules
 * (docs/ops/alerts.yml) name only what the service exposes: every PromQL expression is parsed
 * with Prometheus's own grammar, and each metric, label and listed label value it names is
 * looked up in the metrics catalog (src/services/metrics/catalog.ts) and, for prom-client's
 * default Node.js metrics, in a real registry. The dashboard has a row for every catalog
 * family, and every alert a runbook heading in docs/OPERATIONS.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { VARIABLES } from '../../src/config.js';
import { METRICS, type MetricFamily, type MetricId } from '../../src/services/metrics/catalog.js';
import { ServiceMetrics } from '../../src/services/metrics/metrics.js';
import { readPromql, type Matcher } from '../helpers/promql.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DASHBOARD = 'docs/ops/grafana-dashboard.json';
const ALERTS = 'docs/ops/alerts.yml';
const OPERATIONS = 'docs/OPERATIONS.md';

/** Labels Prometheus adds to every series at scrape; anything else must come from the service. */
const SCRAPE_LABELS = ['instance', 'job'];
const HISTOGRAM_SERIES = ['_bucket', '_sum', '_count'];

/** Exposed series name -> its labels -> the values it takes (null: not a listed set). */
type Exposed = Map<string, Map<string, readonly string[] | null>>;

/**
 * The row of the dashboard that shows each family (the areas, plus one row for the
 * families it did not list). A Record, so that a family added to the catalog does not compile
 * here until it has a row, and the test checks the row has a panel that selects it.
 */
const ROW_OF: Record<MetricId, string> = {
  httpRequests: 'Requests',
  httpDuration: 'Requests',
  rateLimitDecisions: 'Rate limiter',
  redisConnected: 'Rate limiter',
  streamsOpen: 'Streams',
  webhookDeliveries: 'Webhooks',
  webhookDeliveryLag: 'Webhooks',
  webhookSubscriptions: 'Webhooks',
  outboxPending: 'Outbox backlog',
  outboxOldestPending: 'Outbox backlog',
  feedRequests: 'Odds feed credits and errors',
  feedCreditsRemaining: 'Odds feed credits and errors',
  feedCreditsUsed: 'Odds feed credits and errors',
  feedBudgetCredits: 'Odds feed credits and errors',
  feedNextPoll: 'Odds feed credits and errors',
  feedPollsStopped: 'Odds feed credits and errors',
  enginePollDuration: 'Value engine',
  engineLastPoll: 'Value engine',
  engineCandidates: 'Value engine',
  picksPublished: 'Picks, ledger and database',
  picksSettled: 'Picks, ledger and database',
  ledgerEntries: 'Picks, ledger and database',
  ledgerCheckpointSize: 'Picks, ledger and database',
  ledgerCheckpointSigned: 'Picks, ledger and database',
  ledgerWitnessSubmissions: 'Picks, ledger and database',
  dbPoolConnections: 'Picks, ledger and database',
};
const ERRORS_ROW = '5xx and 429 rates';

/** The alert list, each item as the families its rule must read. */
const ALERTED: Record<string, MetricId[]> = {
  '5xx rate': ['httpRequests'],
  'limiter in fallback': ['rateLimitDecisions', 'redisConnected'],
  'outbox oldest pending over a minute': ['outboxOldestPending'],
  'webhook exhaustion': ['webhookDeliveries', 'webhookSubscriptions'],
  'no engine poll for three periods': ['engineLastPoll'],
  "feed credits below a day's use": ['feedCreditsRemaining', 'feedCreditsUsed'],
  'feed 401/403': ['feedRequests'],
};

const SEVERITIES = ['critical', 'warning', 'info'];
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

// ---------------------------------------------------------------------------------------------
// What the service exposes

function addFamily(exposed: Exposed, name: string, type: string, labels: Map<string, readonly string[] | null>): void {
  for (const label of SCRAPE_LABELS) labels.set(label, null);
  if (type !== 'histogram') {
    exposed.set(name, labels);
    return;
  }
  for (const suffix of HISTOGRAM_SERIES) exposed.set(name + suffix, suffix === '_bucket' ? new Map([...labels, ['le', null]]) : labels);
}

async function exposedSeries(): Promise<Exposed> {
  const exposed: Exposed = new Map();
  const families: MetricFamily[] = Object.values(METRICS);
  for (const family of families) {
    const labels = new Map(Object.entries(family.labels).map(([label, values]) => [label, 'boundedBy' in values ? null : values] as const));
    addFamily(exposed, family.name, family.type, labels);
  }
  // prom-client's defaults as this version registers them (names differ across versions and platforms).
  const metrics = new ServiceMetrics();
  metrics.collectDefaults();
  const catalog = new Set(families.map((family) => family.name));
  for (const family of await metrics.registry.getMetricsAsJSON()) {
    if (catalog.has(family.name)) continue;
    // Declared label names (not in prom-client's types), with those of the samples seen.
    const declared = (metrics.registry.getSingleMetric(family.name) as unknown as { labelNames?: readonly string[] } | undefined)?.labelNames ?? [];
    const seen = family.values.flatMap((sample) => Object.keys(sample.labels)).filter((label) => label !== 'le');
    addFamily(exposed, family.name, String(family.type), new Map([...declared, ...seen].map((label) => [label, null] as const)));
  }
  return exposed;
}

// ---------------------------------------------------------------------------------------------
// Checking expressions

/** Grafana's interval macros stand where PromQL wants a duration. */
function withoutGrafanaMacros(expr: string): string {
  return expr.replace(/\$\{?__(rate_interval|interval|range)\}?/g, '5m');
}

/** Whether a matcher selects `value` (regexes anchored, as Prometheus does). */
function accepts(matcher: Matcher, value: string): boolean {
  switch (matcher.op) {
    case '=':
      return matcher.value === value;
    case '!=':
      return matcher.value !== value;
    case '=~':
      return new RegExp(`^(?:${matcher.value})$`).test(value);
    case '!~':
      return !new RegExp(`^(?:${matcher.value})$`).test(value);
  }
}

/** A matcher's value against the listed values of its label: null when it names only those. */
function valueProblem(matcher: Matcher, allowed: readonly string[]): string | null {
  // An empty value matches the label's absence (`label!=""`: present): nothing to look up.
  if (matcher.value === '') return null;
  if (matcher.op === '=' || matcher.op === '!=') return allowed.includes(matcher.value) ? null : `"${matcher.value}" is not one of ${allowed.join(', ')}`;
  // A plain a|b|c: each alternative must select a listed value; another regex, at least one.
  const plain = !/[()[\]{}\\]/.test(matcher.value);
  for (const alternative of plain ? matcher.value.split('|') : [matcher.value]) {
    let pattern: RegExp;
    try {
      pattern = new RegExp(`^(?:${alternative})$`);
    } catch {
      return `"${alternative}" is not a regular expression`;
    }
    if (!allowed.some((value) => pattern.test(value))) return `"${alternative}" selects none of ${allowed.join(', ')}`;
  }
  return null;
}

/** What is wrong with an expression: metrics, labels and values the service does not expose. */
function exprProblems(where: string, expr: string, exposed: Exposed): string[] {
  const refs = readPromql(withoutGrafanaMacros(expr));
  const problems = refs.errors.map((error) => `${where}: ${error}`);
  for (const selector of refs.selectors) {
    const labels = exposed.get(selector.metric);
    if (!labels) {
      problems.push(`${where}: metric ${selector.metric} is not exposed`);
      continue;
    }
    for (const matcher of selector.matchers) {
      if (!labels.has(matcher.label)) {
        problems.push(`${where}: ${selector.metric} has no label ${matcher.label} (it has ${[...labels.keys()].join(', ')})`);
        continue;
      }
      const allowed = labels.get(matcher.label);
      const problem = allowed ? valueProblem(matcher, allowed) : null;
      if (problem) problems.push(`${where}: ${selector.metric}{${matcher.label}${matcher.op}...}: ${problem}`);
    }
  }
  for (const grouping of refs.groupings) {
    if (grouping.metrics.length === 0) problems.push(`${where}: ${grouping.clause}(${grouping.labels.join(', ')}) applies to no metric`);
    for (const label of grouping.labels) {
      // Every metric under the clause must have the label: one without it would group or match on "".
      for (const metric of grouping.metrics) {
        const labels = exposed.get(metric);
        if (labels && !labels.has(label)) problems.push(`${where}: ${grouping.clause}(${label}): ${metric} has no label ${label}`);
      }
    }
  }
  return problems;
}

/** A Grafana Prometheus variable query: label_values(selector, label), label_values(label) or query_result(expr). */
function variableQueryProblems(where: string, query: string, exposed: Exposed): string[] {
  const twoArgs = /^\s*label_values\(\s*(.+?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$/s.exec(query);
  if (twoArgs) {
    const [, selectorText, label] = twoArgs as unknown as [string, string, string];
    const problems = exprProblems(where, selectorText, exposed);
    const refs = readPromql(selectorText);
    if (refs.selectors.length !== 1 || refs.groupings.length > 0) return [...problems, `${where}: label_values() takes one series selector, not ${selectorText}`];
    const labels = exposed.get(refs.selectors[0]!.metric);
    if (labels && !labels.has(label)) problems.push(`${where}: label_values(): ${refs.selectors[0]!.metric} has no label ${label}`);
    return problems;
  }
  const oneArg = /^\s*label_values\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$/.exec(query);
  if (oneArg) return [...exposed.values()].some((labels) => labels.has(oneArg[1]!)) ? [] : [`${where}: no metric has the label ${oneArg[1]}`];
  const result = /^\s*query_result\((.*)\)\s*$/s.exec(query);
  if (result) return exprProblems(where, result[1]!, exposed);
  return [`${where}: unsupported variable query ${JSON.stringify(query)}`];
}

// ---------------------------------------------------------------------------------------------
// The dashboard

interface Panel {
  id?: unknown;
  type?: string;
  title?: string;
  gridPos?: { h?: unknown; w?: unknown; x?: unknown; y?: unknown };
  datasource?: { type?: string; uid?: string };
  targets?: { refId?: string; expr?: string; datasource?: { uid?: string } }[];
  panels?: Panel[];
  collapsed?: boolean;
}

interface Dashboard {
  schemaVersion?: unknown;
  uid?: unknown;
  title?: unknown;
  panels?: Panel[];
  templating?: { list?: { name?: string; type?: string; query?: unknown; definition?: unknown; datasource?: { uid?: string }; multi?: boolean; includeAll?: boolean }[] };
}

/** Panels with the row they sit under (rows own the panels after them, or their own when collapsed). */
function panelsWithRows(dashboard: Dashboard): { panel: Panel; row: string | null; nested: boolean }[] {
  const placed: { panel: Panel; row: string | null; nested: boolean }[] = [];
  let row: string | null = null;
  for (const panel of dashboard.panels ?? []) {
    if (panel.type === 'row') {
      row = panel.title ?? '';
      for (const child of panel.panels ?? []) placed.push({ panel: child, row, nested: true });
      continue;
    }
    placed.push({ panel, row, nested: false });
  }
  return placed;
}

function dashboardExprs(dashboard: Dashboard): { where: string; expr: string; row: string | null }[] {
  return panelsWithRows(dashboard).flatMap(({ panel, row }) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr ?? '', row })),
  );
}

function variableQueries(dashboard: Dashboard): { where: string; query: string }[] {
  return (dashboard.templating?.list ?? [])
    .filter((variable) => variable.type === 'query')
    .flatMap((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query as { query?: string } | undefined)?.query;
      return [
        { where: `variable ${variable.name} query`, query: query ?? '' },
        ...(typeof variable.definition === 'string' ? [{ where: `variable ${variable.name} definition`, query: variable.definition }] : []),
      ];
    });
}

function layoutProblems(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  const ids = new Set<unknown>();
  const all = [...(dashboard.panels ?? []), ...(dashboard.panels ?? []).flatMap((panel) => panel.panels ?? [])];
  for (const panel of all) {
    if (!Number.isInteger(panel.id)) problems.push(`panel "${panel.title}": id ${String(panel.id)} is not an integer`);
    if (ids.has(panel.id)) problems.push(`panel "${panel.title}": id ${String(panel.id)} is used twice`);
    ids.add(panel.id);
    const { h, w, x, y } = panel.gridPos ?? {};
    if (![h, w, x, y].every(Number.isInteger)) {
      problems.push(`panel "${panel.title}": gridPos needs integer h, w, x, y`);
      continue;
    }
    if ((x as number) < 0 || (w as number) < 1 || (x as number) + (w as number) > 24 || (h as number) < 1 || (y as number) < 0) problems.push(`panel "${panel.title}": gridPos out of the 24-column grid`);
  }
  // Panels on the page (not those folded in a collapsed row) may not overlap.
  const top = (dashboard.panels ?? []).map((panel) => ({ title: panel.title, ...(panel.gridPos as { h: number; w: number; x: number; y: number }) }));
  for (let i = 0; i < top.length; i++) {
    for (let j = i + 1; j < top.length; j++) {
      const a = top[i]!;
      const b = top[j]!;
      if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) problems.push(`panels "${a.title}" and "${b.title}" overlap`);
    }
  }
  for (const { panel } of panelsWithRows(dashboard)) {
    if (panel.type !== 'timeseries' && panel.type !== 'stat') problems.push(`panel "${panel.title}": type ${panel.type} (timeseries or stat expected)`);
    if (panel.datasource?.uid !== '${datasource}') problems.push(`panel "${panel.title}": datasource is not the $datasource variable`);
    const targets = panel.targets ?? [];
    if (targets.length === 0) problems.push(`panel "${panel.title}": no query`);
    const refIds = targets.map((target) => target.refId);
    if (new Set(refIds).size !== refIds.length || refIds.some((refId) => !refId)) problems.push(`panel "${panel.title}": refIds missing or repeated`);
    for (const target of targets) {
      if (!target.expr?.trim()) problems.push(`panel "${panel.title}" ${target.refId}: empty expr`);
      if (target.datasource && target.datasource.uid !== '${datasource}') problems.push(`panel "${panel.title}" ${target.refId}: datasource is not the $datasource variable`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Markdown headings, as GitHub anchors them

interface Heading {
  level: number;
  text: string;
  anchor: string;
  /** The `## ` section it is in (its own text for a `## ` heading). */
  section: string | null;
}

/** GitHub's heading anchor (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function headingsOf(markdown: string): Heading[] {
  const headings: Heading[] = [];
  const used = new Map<string, number>();
  let fence: string | null = null;
  let section: string | null = null;
  for (const line of markdown.split('\n')) {
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fenceMark && (fence === null || fenceMark.startsWith(fence))) {
      fence = fence === null ? fenceMark : null;
      continue;
    }
    if (fence !== null) continue;
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const level = match[1]!.length;
    // The rendered text: links keep their text, code spans their content.
    const text = match[2]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`([^`]*)`/g, '$1');
    const base = githubSlug(text);
    const count = used.get(base) ?? 0;
    used.set(base, count + 1);
    if (level === 2) section = text;
    headings.push({ level, text, anchor: count === 0 ? base : `${base}-${count}`, section: level === 1 ? null : section });
  }
  return headings;
}

// ---------------------------------------------------------------------------------------------
// The alert rules

interface Rule {
  alert?: unknown;
  record?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

function rulesOf(document: unknown): Rule[] {
  const groups = (document as { groups?: { name?: string; rules?: Rule[] }[] } | null)?.groups;
  if (!Array.isArray(groups)) throw new Error(`${ALERTS}: no groups`);
  return groups.flatMap((group) => group.rules ?? []);
}

/** What is wrong with an alert rule's form and runbook, given the anchors of the Alerts section. */
function alertFormProblems(rule: Rule, alertAnchors: ReadonlySet<string>): string[] {
  const name = String(rule.alert);
  const problems: string[] = [];
  if (typeof rule.for !== 'string' || !DURATION.test(rule.for)) problems.push(`${name}: "for" missing or not a duration`);
  if (!SEVERITIES.includes(String(rule.labels?.severity))) problems.push(`${name}: labels.severity must be one of ${SEVERITIES.join(', ')}`);
  for (const key of ['summary', 'description']) {
    if (typeof rule.annotations?.[key] !== 'string' || !(rule.annotations[key] as string).trim()) problems.push(`${name}: annotations.${key} missing`);
  }
  const runbook = rule.annotations?.runbook;
  const anchor = typeof runbook === 'string' ? /^docs\/OPERATIONS\.md#([^#\s]+)$/.exec(runbook)?.[1] : undefined;
  if (anchor === undefined) problems.push(`${name}: annotations.runbook must be docs/OPERATIONS.md#<anchor>`);
  else if (!alertAnchors.has(anchor)) problems.push(`${name}: runbook anchor #${anchor} is not a heading of the Alerts section of ${OPERATIONS}`);
  else if (anchor !== githubSlug(name)) problems.push(`${name}: runbook should point at its own heading #${githubSlug(name)}, not #${anchor}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------

describe('docs/ops: the dashboard and the alerts name only what the service exposes', () => {
  let exposed: Exposed;
  let dashboard: Dashboard;
  let rules: Rule[];
  let headings: Heading[];

  beforeAll(async () => {
    exposed = await exposedSeries();
    dashboard = JSON.parse(readFileSync(ROOT + DASHBOARD, 'utf8')) as Dashboard;
    rules = rulesOf(parseYaml(readFileSync(ROOT + ALERTS, 'utf8')));
    headings = headingsOf(readFileSync(ROOT + OPERATIONS, 'utf8'));
  });

  it('knows the catalog and the default metrics of a real registry', () => {
    expect(exposed.get(METRICS.httpRequests.name)?.has('surface')).toBe(true);
    expect(exposed.has(`${METRICS.httpDuration.name}_bucket`)).toBe(true);
    expect(exposed.has(METRICS.httpDuration.name)).toBe(false);
    expect([...exposed.keys()].some((name) => name.startsWith('nodejs_'))).toBe(true);
    expect([...exposed.keys()].some((name) => name.startsWith('process_'))).toBe(true);
  });

  describe(DASHBOARD, () => {
    it('is an importable dashboard: schema, variables, ids and grid', () => {
      expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
      expect(typeof dashboard.uid).toBe('string');
      expect(typeof dashboard.title).toBe('string');
      const variables = dashboard.templating?.list ?? [];
      expect(variables.find((variable) => variable.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
      const instance = variables.find((variable) => variable.name === 'instance');
      expect(instance).toMatchObject({ type: 'query', multi: true, includeAll: true, datasource: { uid: '${datasource}' } });
      expect(variableQueries(dashboard).filter((query) => query.where.startsWith('variable instance')).map((query) => query.query.replace(/\s+/g, ''))).toContain(
        `label_values(${METRICS.httpRequests.name},instance)`,
      );
      expect(layoutProblems(dashboard)).toEqual([]);
    });

    it('queries only exposed metrics, labels and label values', () => {
      const exprs = dashboardExprs(dashboard);
      expect(exprs.length).toBeGreaterThan(20);
      const problems = [
        ...exprs.flatMap(({ where, expr }) => exprProblems(where, expr, exposed)),
        ...variableQueries(dashboard).flatMap(({ where, query }) => variableQueryProblems(where, query, exposed)),
      ];
      expect(problems).toEqual([]);
    });

    it('has a row for each area, with a panel for every catalog family', () => {
      const selectedBy = new Map<string, Set<string>>();
      for (const { expr, row } of dashboardExprs(dashboard)) {
        const names = selectedBy.get(row ?? '') ?? new Set<string>();
        for (const selector of readPromql(withoutGrafanaMacros(expr)).selectors) names.add(selector.metric.replace(/_(bucket|sum|count)$/, ''));
        selectedBy.set(row ?? '', names);
      }
      const missing = (Object.entries(ROW_OF) as [MetricId, string][])
        .filter(([id, row]) => !selectedBy.get(row)?.has(METRICS[id].name))
        .map(([id, row]) => `${METRICS[id].name} has no panel in row "${row}"`);
      expect(missing).toEqual([]);
      // 5xx and 429 rates have a row of their own, each with a panel selecting that status.
      const statusSelectors = dashboardExprs(dashboard)
        .filter(({ row }) => row === ERRORS_ROW)
        .flatMap(({ expr }) => readPromql(expr).selectors)
        .filter((selector) => selector.metric === METRICS.httpRequests.name)
        .flatMap((selector) => selector.matchers.filter((matcher) => matcher.label === 'status'));
      for (const status of ['500', '503', '429']) expect(statusSelectors.some((matcher) => accepts(matcher, status)), `a panel of "${ERRORS_ROW}" selects status ${status}`).toBe(true);
    });
  });

  describe(ALERTS, () => {
    it('has alerts, uniquely named', () => {
      const names = rules.filter((rule) => rule.alert !== undefined).map((rule) => String(rule.alert));
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
      for (const rule of rules) expect(typeof rule.alert === 'string' || typeof rule.record === 'string', JSON.stringify(rule)).toBe(true);
    });

    it('reads only exposed metrics, labels and label values', () => {
      const problems = rules.flatMap((rule) =>
        typeof rule.expr === 'string' ? exprProblems(String(rule.alert ?? rule.record), rule.expr, exposed) : [`${String(rule.alert ?? rule.record)}: no expr`],
      );
      expect(problems).toEqual([]);
    });

    it('gives every alert a for, a severity, a summary, a description and a runbook heading in docs/OPERATIONS.md', () => {
      const alertSection = headings.filter((heading) => heading.section === 'Alerts' && heading.level > 2);
      const problems = rules.filter((rule) => rule.alert !== undefined).flatMap((rule) => alertFormProblems(rule, new Set(alertSection.map((heading) => heading.anchor))));
      expect(problems).toEqual([]);
      // And no heading for an alert that is gone.
      const alerts = new Set(rules.map((rule) => rule.alert));
      const stale = alertSection.filter((heading) => heading.level === 3 && /^Picks[A-Za-z0-9]+$/.test(heading.text) && !alerts.has(heading.text));
      expect(stale.map((heading) => heading.text)).toEqual([]);
    });

    it("covers the issue's list", () => {
      const read = new Set(rules.filter((rule) => rule.alert !== undefined).flatMap((rule) => readPromql(String(rule.expr)).selectors.map((selector) => selector.metric)));
      const uncovered = Object.entries(ALERTED).flatMap(([item, ids]) => ids.filter((id) => !read.has(METRICS[id].name)).map((id) => `${item}: no alert reads ${METRICS[id].name}`));
      expect(uncovered).toEqual([]);
    });

    it('counts "three poll periods" with the default of ODDS_POLL_SECONDS', () => {
      const period = VARIABLES.ODDS_POLL_SECONDS.default;
      expect(typeof period).toBe('number');
      const polling = rules.filter((rule) => readPromql(String(rule.expr)).selectors.some((selector) => selector.metric === METRICS.engineLastPoll.name));
      expect(polling.length).toBeGreaterThan(0);
      for (const rule of polling) expect(String(rule.expr), String(rule.alert)).toContain(`3 * ${String(period)}`);
    });
  });
});

describe('the check itself finds what drifted', () => {
  let exposed: Exposed;
  beforeAll(async () => {
    exposed = await exposedSeries();
  });

  it.each([
    ['a misspelled metric', 'rate(picks_http_request_total[5m])', 'metric picks_http_request_total is not exposed'],
    ['a histogram read without its _bucket series', 'rate(picks_http_request_duration_seconds[5m])', 'is not exposed'],
    ['a label the metric does not have', 'picks_streams_open{route="/x"}', 'picks_streams_open has no label route'],
    ['le on a histogram _sum', 'picks_http_request_duration_seconds_sum{le="1"}', 'has no label le'],
    ['a value not in the label list', 'picks_rate_limit_decisions_total{engine="fallbak"}', '"fallbak" is not one of redis, memory, fallback'],
    ['a regex alternative not in the label list', 'picks_webhook_deliveries_total{result=~"delivered|lost"}', '"lost" selects none of'],
    ['a by() label the metric does not have', 'sum by (sport) (rate(picks_http_requests_total[5m]))', 'by(sport): picks_http_requests_total has no label sport'],
    ['an on() label one side does not have', 'picks_outbox_pending / on (surface) picks_streams_open', 'on(surface): picks_outbox_pending has no label surface'],
    ['a default metric misspelled', 'nodejs_heap_used_bytes', 'metric nodejs_heap_used_bytes is not exposed'],
    ['a syntax error', 'sum by (surface) (rate(picks_http_requests_total[5m])', 'syntax error'],
  ])('reports %s', (_, expr, expected) => {
    expect(exprProblems('test', expr, exposed).join('\n')).toContain(expected);
  });

  it('accepts what is exposed, scrape labels and defaults included', () => {
    const good = [
      'sum by (le, surface) (rate(picks_http_request_duration_seconds_bucket{instance=~"a|b", job="picks"}[5m]))',
      'picks_webhook_deliveries_total{result=~"exhausted|failed", event="pick.published"}',
      'picks_http_requests_total{status=~"5.."}',
      'max without (instance) (nodejs_eventloop_lag_p99_seconds)',
      'rate(nodejs_gc_duration_seconds_bucket{kind="major"}[5m])',
    ];
    expect(good.flatMap((expr) => exprProblems('test', expr, exposed))).toEqual([]);
  });

  it('reads variable queries', () => {
    expect(variableQueryProblems('v', 'label_values(picks_http_requests_total, instance)', exposed)).toEqual([]);
    expect(variableQueryProblems('v', 'label_values(picks_http_requests_total, sport)', exposed).join()).toContain('has no label sport');
    expect(variableQueryProblems('v', 'label_values(picks_http_requets_total, instance)', exposed).join()).toContain('is not exposed');
  });

  it('reports a runbook anchor with no heading', () => {
    const rule: Rule = { alert: 'PicksX', expr: 'vector(1)', for: '1m', labels: { severity: 'warning' }, annotations: { summary: 's', description: 'd', runbook: 'docs/OPERATIONS.md#picksx' } };
    expect(alertFormProblems(rule, new Set(['picksx']))).toEqual([]);
    expect(alertFormProblems(rule, new Set(['picksy'])).join()).toContain('runbook anchor #picksx is not a heading');
    expect(alertFormProblems({ ...rule, for: undefined, labels: {} }, new Set(['picksx'])).join('\n')).toMatch(/"for" missing[\s\S]*severity/);
  });

  it('anchors headings as GitHub does', () => {
    const headings = headingsOf('# T\n## Alerts\n### PicksHigh5xxRate\n```sh\n# not a heading\n```\n### Loading the `rules` (Prometheus)\n### Loading the `rules` (Prometheus)\n');
    expect(headings.map((heading) => heading.anchor)).toEqual(['t', 'alerts', 'pickshigh5xxrate', 'loading-the-rules-prometheus', 'loading-the-rules-prometheus-1']);
    expect(headings[2]!.section).toBe('Alerts');
  });
});
