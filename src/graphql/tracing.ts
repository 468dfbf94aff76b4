/**
 * The GraphQL operation's span (docs/OPERATIONS.md, "Traces"): yoga's OpenTelemetry plugin
 * (@envelop/opentelemetry), loaded only when the app traces (src/app.ts asks). Its execute hooks
 * run for /graphql and for the REST adapters alike: they execute through yoga.getEnveloped.
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';

/** The tracer's name on the spans (their instrumentation scope). */
const TRACER_NAME = 'picks-service.graphql';

/**
 * The plugin keeps the OpenTelemetry context of each GraphQL context object it first sees and
 * never forgets it: an operation run later with the same object (a second document of one REST
 * request, the server's one internal context) would be parented to an old operation's span.
 * Before each operation, this hands it the context active now.
 */
function useCurrentParent(setCurrentOtelContext: (graphqlContext: unknown, otelContext: ReturnType<typeof context.active>) => unknown): Plugin {
  return {
    onExecute({ args }) {
      if (args.contextValue) setCurrentOtelContext(args.contextValue, context.active());
    },
    onSubscribe({ args }) {
      if (args.contextValue) setCurrentOtelContext(args.contextValue, context.active());
    },
  };
}

/**
 * The plugins to add last (after graphql-jit and the shared subscriptions, so the operation's
 * span wraps the executor that really runs). One span per operation, named `query.Picks` and the
 * like: INTERNAL, the HTTP server span is the request's SERVER span. No per-field spans (a list
 * of picks would make hundreds) and no variables or results (they carry customers' data); the
 * document is kept when it has no inline arguments.
 */
export async function graphqlTracingPlugins(): Promise<Plugin[]> {
  const { useOpenTelemetry, setCurrentOtelContext } = await import('@envelop/opentelemetry');
  return [
    useCurrentParent(setCurrentOtelContext),
    useOpenTelemetry({ resolvers: false, variables: false, result: false, document: true }, trace.getTracerProvider(), SpanKind.INTERNAL, {}, TRACER_NAME) as Plugin,
  ];
}
