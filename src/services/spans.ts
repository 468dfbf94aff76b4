/**
 * The service's own spans (docs/OPERATIONS.md, "Traces"): an engine poll, a webhook attempt.
 * Only @opentelemetry/api here: without the SDK (tracing off) its tracer makes no-op spans and
 * this costs a function call.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace, type Attributes, type Span } from '@opentelemetry/api';

const tracer = trace.getTracer('picks-service');

export interface SpanOptions {
  /** A trace of its own, whatever span is active (a timer may carry an unrelated request's context). */
  root?: boolean;
  kind?: SpanKind;
}

/**
 * Runs `work` with a new span active (its children: SQL, HTTP requests, nested spans); the span
 * ends when `work` settles, marked as an error when it throws.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  const parent = options.root ? ROOT_CONTEXT : context.active();
  return tracer.startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the active span, if any (an outcome known deep inside the work). */
export function annotateActiveSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * Runs `fn` outside any trace. A background loop woken from a request or a poll (the outbox
 * relay, the webhook dispatcher) would otherwise run, and re-arm its timers, in that trace's
 * context, and every later round would join a trace that ended long ago.
 */
export function outsideTraces<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}
