/**
 * `npm run ledger-key -- <origin>`: a new Ed25519 key for the ledger's checkpoints (C2SP
 * signed-note format). The private key goes to stdout, for LEDGER_SIGNING_KEY in a secret store;
 * the verifier key, which customers and witnesses pin, to stderr. The origin names this log to
 * everyone who checks it: a schema-less URL of the service (`api.example.com/ledger`).
 */
import { generateSignerKey, parseSignerKey } from '../domain/signed-note.js';

const origin = process.argv[2];
if (!origin || process.argv.length > 3 || /[+\s]/u.test(origin)) {
  process.stderr.write('Usage: npm run ledger-key -- <origin>   (a name without spaces or "+", e.g. api.example.com/ledger)\n');
  process.exit(2);
}
const key = generateSignerKey(origin);
process.stdout.write(`${key}\n`);
process.stderr.write(`verifier key (publish it; GET /api/public/ledger/key serves it): ${parseSignerKey(key).text}\n`);
