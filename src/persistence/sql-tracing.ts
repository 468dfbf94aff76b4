/**
 * SQL spans for the embedded database (docs/OPERATIONS.md, "Traces"). PostgreSQL's come from
 * OpenTelemetry's pg instrumentation; PGlite has none, so its statements are wrapped here, named
 * and attributed as the database conventions say (and as the pg instrumentation does):
 * db.system.name postgresql, db.query.text, db.operation.name, db.collection.name when the
 * statement names a table.
 *
 * MikroORM writes the values into the statement it sends (on PostgreSQL too), so the text would
 * carry customers' data: key hashes, emails, secrets' ciphertexts. db.query.text is the statement
 * with every literal replaced by `?` (sanitizeSql), as the conventions ask of text that is not
 * parameterized; src/server/tracing.ts applies the same to the pg instrumentation's spans.
 *
 * The wrap point is kysely's one PGlite connection (MikroORM's onCreateConnection hands it over):
 * every statement MikroORM runs, in a transaction or not, goes through its executeQuery. Wrapping
 * the PGlite instance instead would mean creating it ourselves (driverOptions.pglite), which
 * skips the type parsers MikroORM gives the instance it creates and leaves closing it to us.
 */
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

/** The tracer's name on the spans (their instrumentation scope). */
const TRACER_NAME = 'picks-service.pglite';

interface CompiledStatement {
  sql: string;
}

interface StatementResult {
  rows?: readonly unknown[];
}

/** What MikroORM's onCreateConnection passes for PGlite: kysely's connection. */
export interface QueryingConnection {
  executeQuery(query: CompiledStatement, ...rest: unknown[]): Promise<StatementResult>;
}

/**
 * String literals (E'...' with its backslash escapes, '...' with doubled quotes, $tag$...$tag$)
 * and numbers that are not part of a name or a $n placeholder.
 */
const LITERAL = /(?<!\w)[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$|(?<![\w$.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;

/** The statement with every literal value replaced by `?`: its shape, none of its data. */
export function sanitizeSql(sql: string): string {
  return sql.replace(LITERAL, '?');
}

const TABLE_AFTER = /\b(?:from|into|update|join)\s+("?)([A-Za-z_][\w$]*)\1(?:\s*\.\s*("?)([A-Za-z_][\w$]*)\3)?/i;

/** SELECT, INSERT, BEGIN...: the statement's first keyword (a CTE's `WITH` stays `WITH`). */
export function operationName(sql: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(sql);
  return match ? match[1]!.toUpperCase() : 'UNKNOWN';
}

/** The first table the statement names (schema-qualified names keep the table), if any. */
export function collectionName(sql: string): string | undefined {
  const match = TABLE_AFTER.exec(sql);
  if (!match) return undefined;
  return match[4] ?? match[2];
}

function endWithError(span: Span, error: unknown): void {
  const code = typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
  if (code) span.setAttributes({ 'db.response.status_code': code, 'error.type': code });
  else span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

/**
 * Wraps the connection's executeQuery: a CLIENT span per statement, as a child of the active span.
 * A statement with no active span (the outbox relay's rounds, lease renewals) makes none: as the
 * pg instrumentation is set up (requireParentSpan), only work that belongs to a trace is recorded.
 */
export function traceStatements(connection: QueryingConnection): void {
  const tracer = trace.getTracer(TRACER_NAME);
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = (query, ...rest) => {
    if (!trace.getActiveSpan()) return execute(query, ...rest);
    const operation = operationName(query.sql);
    const collection = collectionName(query.sql);
    const span = tracer.startSpan(collection ? `${operation} ${collection}` : operation, {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'db.query.text': sanitizeSql(query.sql),
        'db.operation.name': operation,
        ...(collection ? { 'db.collection.name': collection } : {}),
      },
    });
    return execute(query, ...rest).then(
      (result) => {
        if (result.rows) span.setAttribute('db.response.returned_rows', result.rows.length);
        span.end();
        return result;
      },
      (error: unknown) => {
        endWithError(span, error);
        throw error;
      },
    );
  };
}
