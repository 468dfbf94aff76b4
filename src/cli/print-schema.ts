/** `npm run schema:print`: rewrites schema.graphql from the Pothos schema. */
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../graphql/schema.js';

const target = new URL('../../../schema.graphql', import.meta.url);
writeFileSync(target, printedSchema());
process.stdout.write(`Wrote ${target.pathname}\n`);
