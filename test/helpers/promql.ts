/**
 * What a PromQL expression names, read with the Prometheus project's own grammar
 * (@prometheus-io/lezer-promql, the parser of Prometheus's web UI) rather than with regexes:
 * the vector selectors (metric name and label matchers) and the label lists of `by`,
 * `without`, `on`, `ignoring`, `group_left` and `group_right`, each with the metrics it applies
 * to. Used to check the dashboard and the alert rules against the metrics catalog.
 */
import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  label: string;
  op: MatchOp;
  value: string;
}

export interface Selector {
  metric: string;
  matchers: Matcher[];
  text: string;
}

/** Labels named by a grouping or matching clause, and the metrics selected where it applies. */
export interface Grouping {
  clause: 'by' | 'without' | 'on' | 'ignoring' | 'group_left' | 'group_right';
  labels: string[];
  metrics: string[];
  text: string;
}

export interface PromqlRefs {
  selectors: Selector[];
  groupings: Grouping[];
  /** Syntax errors, and selectors this reading cannot name a metric for. */
  errors: string[];
}

const MATCH_OPS: ReadonlySet<string> = new Set(['=', '!=', '=~', '!~']);

/** A PromQL string literal's value: "..." and '...' with Go escapes, `...` raw. */
export function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  if (literal.startsWith('`')) return body;
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };
  return body.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{3}|.)/g, (whole, escape: string) => {
    if (/^[uUx]/.test(escape)) return String.fromCodePoint(parseInt(escape.slice(1), 16));
    if (/^[0-7]{3}$/.test(escape)) return String.fromCodePoint(parseInt(escape, 8));
    return simple[escape] ?? whole;
  });
}

function children(node: SyntaxNode): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) found.push(child);
  return found;
}

/** Every node named `name` in the subtree of `node` (itself included), in source order. */
function descendants(node: SyntaxNode, name: string): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const visit = (at: SyntaxNode) => {
    if (at.name === name) found.push(at);
    for (const child of children(at)) visit(child);
  };
  visit(node);
  return found;
}

function labelNamesOf(list: SyntaxNode, text: (node: SyntaxNode) => string): string[] {
  return children(list).flatMap((child) => {
    if (child.name === 'LabelName') return [text(child)];
    if (child.name === 'QuotedLabelName') return [unquote(text(child.getChild('StringLiteral')!))];
    return [];
  });
}

export function readPromql(expr: string): PromqlRefs {
  const tree = parser.parse(expr);
  const text = (node: SyntaxNode) => expr.slice(node.from, node.to);
  const refs: PromqlRefs = { selectors: [], groupings: [], errors: [] };

  tree.iterate({
    enter(node) {
      if (node.type.isError) refs.errors.push(`syntax error at offset ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 15), node.from + 15))}`);
    },
  });
  if (refs.errors.length > 0) return refs;

  const selectorCache = new Map<number, Selector | null>();
  const selectorOf = (node: SyntaxNode): Selector | null => {
    if (selectorCache.has(node.from)) return selectorCache.get(node.from)!;
    let metric = node.getChild('Identifier') ? text(node.getChild('Identifier')!) : null;
    const matchers: Matcher[] = [];
    const matcherList = node.getChild('LabelMatchers');
    for (const child of matcherList ? children(matcherList) : []) {
      if (child.name === 'QuotedLabelName') {
        // `{"metric_name", ...}`: the metric's name among the matchers.
        metric = unquote(text(child.getChild('StringLiteral')!));
        continue;
      }
      if (child.name !== 'UnquotedLabelMatcher' && child.name !== 'QuotedLabelMatcher') continue;
      const nameNode = child.getChild('LabelName') ?? child.getChild('QuotedLabelName')!;
      const label = nameNode.name === 'LabelName' ? text(nameNode) : unquote(text(nameNode.getChild('StringLiteral')!));
      const op = text(child.getChild('MatchOp')!);
      if (!MATCH_OPS.has(op)) throw new Error(`unknown match operator ${op}`);
      const literals = child.getChildren('StringLiteral');
      const value = unquote(text(literals[literals.length - 1]!));
      if (label === '__name__') {
        if (op !== '=') {
          refs.errors.push(`${text(node)}: a metric name chosen by ${op} cannot be checked; name the metric`);
          continue;
        }
        metric = value;
        continue;
      }
      matchers.push({ label, op: op as MatchOp, value });
    }
    let selector: Selector | null = null;
    if (metric === null) refs.errors.push(`${text(node)}: a selector without a metric name cannot be checked`);
    else selector = { metric, matchers, text: text(node) };
    selectorCache.set(node.from, selector);
    return selector;
  };
  const metricsUnder = (node: SyntaxNode | null): string[] => {
    if (!node) return [];
    const names = descendants(node, 'VectorSelector').map(selectorOf).filter((s): s is Selector => s !== null).map((s) => s.metric);
    return [...new Set(names)];
  };

  for (const node of descendants(tree.topNode, 'VectorSelector')) {
    const selector = selectorOf(node);
    if (selector) refs.selectors.push(selector);
  }

  for (const node of descendants(tree.topNode, 'AggregateExpr')) {
    const modifier = node.getChild('AggregateModifier');
    if (!modifier) continue;
    const clause = modifier.getChild('By') ? 'by' : 'without';
    const labels = labelNamesOf(modifier.getChild('GroupingLabels')!, text);
    refs.groupings.push({ clause, labels, metrics: metricsUnder(node.getChild('FunctionCallBody')), text: text(node) });
  }

  for (const node of descendants(tree.topNode, 'BinaryExpr')) {
    const clauseNode = node.getChild('MatchingModifierClause');
    if (!clauseNode) continue;
    const left = node.firstChild;
    const right = node.lastChild;
    const parts = children(clauseNode);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const list = parts[i + 1]?.name === 'GroupingLabels' ? parts[i + 1]! : null;
      if (!list) continue;
      const labels = labelNamesOf(list, text);
      if (part.name === 'On' || part.name === 'Ignoring') {
        // Matching applies to both sides.
        refs.groupings.push({ clause: part.name === 'On' ? 'on' : 'ignoring', labels, metrics: [...new Set([...metricsUnder(left), ...metricsUnder(right)])], text: text(node) });
      } else if (part.name === 'GroupLeft' || part.name === 'GroupRight') {
        // The labels copied come from the "one" side.
        const one = part.name === 'GroupLeft' ? right : left;
        refs.groupings.push({ clause: part.name === 'GroupLeft' ? 'group_left' : 'group_right', labels, metrics: metricsUnder(one), text: text(node) });
      }
    }
  }
  return refs;
}
