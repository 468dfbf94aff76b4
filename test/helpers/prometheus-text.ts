/**
 * A reader of the Prometheus text exposition format (version 0.0.4) for tests, written from the
 * format's description, not from the library that writes it: `# TYPE` lines and samples
 * `name{label="value",...} number`, label values with `\\`, `\"` and `\n` escapes.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name -> type, from the `# TYPE` lines. */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let consumed = 0;
  for (let match = LABEL.exec(text); match; match = LABEL.exec(text)) {
    labels[match[1]!] = unescape(match[2]!);
    consumed = LABEL.lastIndex;
  }
  if (consumed !== text.length) throw new Error(`unreadable labels: {${text}}`);
  return labels;
}

function parseValue(text: string): number {
  // As Prometheus reads them (Go's ParseFloat): any case (prom-client writes an empty mean `Nan`).
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    let value: number;
    try {
      value = parseValue(match[3]!);
    } catch (error) {
      throw new Error(`${(error as Error).message} in: ${line}`);
    }
    samples.push({ name: match[1]!, labels: match[2] ? parseLabels(match[2]) : {}, value });
  }
  return { types, samples };
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function total(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}
