// One module per domain; importing them registers their types and fields on the builder.
import './scalars.js';
import './match-analysis.js';
import './pick.js';
import './track-record.js';
import './api-key.js';
import './pick-events.js';
import './webhook.js';
import './stream-token.js';
import './account.js';
import './value-engine.js';
import './feed-budget.js';
import './ledger.js';
