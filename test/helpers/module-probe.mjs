/**
 * Preloaded into a server process (NODE_OPTIONS=--import=<this file>) by test/integration/
 * tracing.test.ts: records the URL of every module the process resolves, imported or required,
 * and writes them as JSON to MODULE_PROBE_FILE when the process exits. It tells the test which
 * packages a start really loaded.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const resolved = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.add(result.url);
    return result;
  },
});
process.on('exit', () => {
  if (process.env.MODULE_PROBE_FILE) writeFileSync(process.env.MODULE_PROBE_FILE, JSON.stringify([...resolved]));
});
