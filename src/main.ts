/**
 * Entry point. `npm start` execs this process (package.json), so the signals npm passes on
 * reach it rather than a shell in between. It imports nothing of the service statically: the
 * service is loaded once the process is set up for it. That setup is tracing: when the
 * OpenTelemetry environment asks for it, the SDK and its instrumentations start first, so the
 * libraries they patch are loaded patched; otherwise nothing of the SDK is loaded.
 */
import { tracingRequested } from './server/tracing-switch.js';

try {
  if (tracingRequested()) (await import('./server/tracing.js')).startTracing();
  const { serve } = await import('./serve.js');
  await serve();
} catch (error: unknown) {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
