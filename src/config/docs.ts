/**
 * What the configuration table of src/config.ts renders: the Markdown tables between
 * `<!-- config:start section=... -->` and `<!-- config:end -->` in README.md and
 * docs/VALUE_ENGINE.md (`npm run config:docs`), and the effective configuration (`npm run config`).
 */
import { ConfigError } from './kinds.js';
import { ByMode, type Resolver, type Table, type Variable } from './variables.js';

/** The files whose marked blocks are generated, relative to the repository root. */
export const CONFIG_DOCS = ['README.md', 'docs/VALUE_ENGINE.md'];

export function sectionsOf(table: Table): string[] {
  return [...new Set(Object.values(table).map((row) => row.section))];
}

export const sectionId = (section: string): string => section.toLowerCase().replace(/[^a-z0-9]+/g, '-');

const isUnset = (value: unknown): boolean => value === null || value === '' || (Array.isArray(value) && value.length === 0) || (value instanceof Map && value.size === 0);

function defaultCell(row: Variable<unknown, unknown>): string {
  if (row.defaultDoc) return row.defaultDoc;
  if (row.default instanceof ByMode) return row.default.doc;
  return isUnset(row.default) ? 'unset' : `\`${row.kind.show(row.default)}\``;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderTable(table: Table, section: string): string {
  const lines = ['| Variable | Default | Allowed | Meaning |', '| --- | --- | --- | --- |'];
  for (const [name, row] of Object.entries(table)) {
    if (row.section !== section) continue;
    const meaning = `${row.description}${row.command ? ` (read by \`${row.command}\` only)` : ''}`;
    lines.push(`| \`${name}\`${row.secret ? ' (secret)' : ''} | ${[defaultCell(row), row.kind.allowed, meaning].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

const GENERATED = '<!-- Generated from the table in src/config.ts by `npm run config:docs`: edit it there, not here. -->';

/** A marked block's content: one section's table, or (`all`) every section's. */
export function renderBlock(table: Table, which: string): string {
  if (which === 'all') {
    const tables = sectionsOf(table).map((section) => `**${section}**\n\n${renderTable(table, section)}`);
    const intro = '`npm run config` prints the effective configuration: every variable, its value (secrets redacted) and where it came from.';
    return [GENERATED, intro, ...tables].join('\n\n');
  }
  const section = sectionsOf(table).find((candidate) => sectionId(candidate) === which);
  if (!section) throw new Error(`config:start names section=${which}; src/config.ts has ${sectionsOf(table).map(sectionId).join(', ')} (or all)`);
  return `${GENERATED}\n\n${renderTable(table, section)}`;
}

const BLOCK = /(<!-- config:start section=([\w-]+) -->\n)[\s\S]*?(<!-- config:end -->)/g;

/** `markdown` with every marked block regenerated from `table`. */
export function renderConfigDocs(markdown: string, table: Table): string {
  return markdown.replace(BLOCK, (_block, start: string, which: string, end: string) => `${start}${renderBlock(table, which)}\n${end}`);
}

export function markedSections(markdown: string): string[] {
  return [...markdown.matchAll(BLOCK)].map((match) => match[2]!);
}

/**
 * The effective configuration, one line per variable by section: name, source, value (secrets
 * `[redacted]`). A refused variable shows its refusal, and one that depends on it says so.
 */
export function renderSettings<R extends Table>(table: R, settings: Resolver<R>): string[] {
  const rows: (string | [string, string, string])[] = [];
  for (const section of sectionsOf(table)) {
    const commands = new Set(Object.values(table).filter((row) => row.section === section).map((row) => row.command));
    rows.push('', commands.size === 1 && !commands.has(undefined) ? `${section} (${[...commands][0]} only)` : section);
    for (const [name, row] of Object.entries(table)) {
      if (row.section !== section) continue;
      try {
        const { source, value } = settings.setting(name);
        rows.push([name, source, isUnset(value) ? 'unset' : row.secret ? '[redacted]' : row.kind.show(value)]);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        const cause = /^Invalid configuration: (\S+)/.exec(error.message)?.[1];
        rows.push(cause === name ? [name, 'refused', error.message] : [name, 'not read', `depends on ${cause}, refused`]);
      }
    }
  }
  const width = (column: 0 | 1) => Math.max(...rows.map((row) => (typeof row === 'string' ? 0 : row[column].length)));
  const [names, sources] = [width(0), width(1)];
  return rows.map((row) => (typeof row === 'string' ? row : `  ${row[0].padEnd(names)}  ${row[1].padEnd(sources)}  ${row[2]}`));
}
