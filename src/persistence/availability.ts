/**
 * Which errors mean "the database cannot be reached right now" (as opposed to a bug or a bad
 * query): refused or dropped connections, a server shutting down or starting up, a pool that
 * could not hand out a connection in time. Every HTTP surface answers these with 503
 * `service_unavailable` instead of 500, and they are logged as warnings, not as bugs.
 *
 * MikroORM wraps driver errors (DriverException copies `code`), so the codes of node-postgres
 * and of the socket survive; `cause` chains and AggregateErrors (several addresses refused)
 * are followed.
 */

/** Socket-level failures while connecting to or talking with PostgreSQL. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * SQLSTATEs: class 08 (connection exception), 57P01 admin_shutdown (fast shutdown or restart),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down),
 * 53300 too_many_connections.
 *
 * Except 08P01 protocol_violation: the server did answer, refusing a message it could not
 * read, e.g. a NUL byte in a value ("insufficient data left in message" on PGlite, "invalid
 * message format" on PostgreSQL) - an internal error, which retrying repeats, not an outage.
 * Data errors (class 22: invalid byte sequence 22021, bad JSON 22P02 / 22P05) are not listed
 * either, so they are internal errors too.
 */
const PROTOCOL_VIOLATION = '08P01';

function isUnavailableSqlState(code: string): boolean {
  if (code === PROTOCOL_VIOLATION) return false;
  return /^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres and pg-pool report these without a code. */
const MESSAGES = [
  /timeout exceeded when trying to connect/i, // pg-pool: no connection within connectionTimeoutMillis (acquire or connect)
  /Connection terminated/i, // pg: the server closed the connection (unexpectedly, or on a connection timeout)
  /Client has encountered a connection error and is not queryable/i,
  /Connection is not (open|established)/i,
];

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const candidate = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof candidate.code === 'string' && (SOCKET_CODES.has(candidate.code) || isUnavailableSqlState(candidate.code))) return true;
  if (typeof candidate.message === 'string' && MESSAGES.some((pattern) => pattern.test(candidate.message as string))) return true;
  if (Array.isArray(candidate.errors) && candidate.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return candidate.cause !== undefined && isDatabaseUnavailable(candidate.cause, depth + 1);
}

/** A unique constraint refused the write (PostgreSQL 23505, as MikroORM converts it on both drivers). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; name?: string } | null;
  return e?.code === '23505' || e?.name === 'UniqueConstraintViolationException';
}
