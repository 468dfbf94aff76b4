/**
 * Whether this process traces, decided from the standard OpenTelemetry environment. Nothing of
 * OpenTelemetry is imported here: src/main.ts asks this module first and loads the SDK
 * (src/server/tracing.ts) only when tracing is asked for, so a service without OTLP settings
 * loads none of it (docs/OPERATIONS.md, "Traces").
 */

/** How long shutdown waits for the last spans to be exported (the exporter's own timeout is longer). */
const FLUSH_TIMEOUT_MS = 5_000;

/**
 * On when an OTLP endpoint is given (OTEL_EXPORTER_OTLP_ENDPOINT, or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
 * says otherwise. The SDK reads every other variable itself (sampler, protocol, headers, name).
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!endpoint) return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() !== 'none';
}

let flushOnExit: (() => Promise<void>) | null = null;

/** Called by src/server/tracing.ts once the SDK runs: the app then adds its own spans and log fields. */
export function markTracingStarted(flush: () => Promise<void>): void {
  flushOnExit = flush;
}

/** True once the SDK was started in this process (never in tests that build the app in-process). */
export function tracingActive(): boolean {
  return flushOnExit !== null;
}

/**
 * Exports the spans still buffered and stops the SDK (src/serve.ts, before the process exits);
 * bounded, so an unreachable collector cannot hold the shutdown. Nothing when tracing is off.
 */
export async function flushTracing(timeoutMs = FLUSH_TIMEOUT_MS): Promise<void> {
  const flush = flushOnExit;
  if (!flush) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([flush().catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
