/**
 * `npm run config`: the effective configuration from this environment, every variable with its
 * value (secrets redacted) and where it came from, and the line `npm start` would refuse with,
 * if any (exit 1). Reads the environment only: no database is opened.
 */
import { describeConfig } from '../config.js';

const { lines, refusal } = describeConfig(process.env);
process.stdout.write(`${lines.join('\n')}\n`);
if (refusal) {
  process.stdout.write(`\nnpm start would stop with: ${refusal}\n`);
  process.exitCode = 1;
}
