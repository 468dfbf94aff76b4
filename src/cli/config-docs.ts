/**
 * `npm run config:docs`: regenerates the configuration tables of README.md and
 * docs/VALUE_ENGINE.md (between `<!-- config:start section=... -->` and `<!-- config:end -->`)
 * from the table in src/config.ts, and the metrics table of docs/OPERATIONS.md from the metrics
 * catalog. `--check` writes nothing and exits 1 when a file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { VARIABLES } from '../config.js';
import { CONFIG_DOCS, renderConfigDocs } from '../config/docs.js';
import { METRICS_DOC, renderMetricsDocs } from '../services/metrics/docs.js';

const check = process.argv.includes('--check');
let stale = 0;
const renderers: [string, (markdown: string) => string][] = [
  ...CONFIG_DOCS.map((file): [string, (markdown: string) => string] => [file, (markdown) => renderConfigDocs(markdown, VARIABLES)]),
  [METRICS_DOC, renderMetricsDocs],
];
for (const [file, render] of renderers) {
  const target = path.resolve(file);
  const current = readFileSync(target, 'utf8');
  const generated = render(current);
  if (generated === current) {
    process.stdout.write(`${file}: up to date\n`);
  } else if (check) {
    stale += 1;
    process.stdout.write(`${file}: differs from what it is generated from (run npm run config:docs)\n`);
  } else {
    writeFileSync(target, generated);
    process.stdout.write(`${file}: regenerated\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
