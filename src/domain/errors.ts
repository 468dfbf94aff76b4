/**
 * The one error table of the service (in the style of Fastify's lib/errors.js): one row per
 * documented `code` (docs/API.md, "Errors") with its HTTP status, default message and
 * the names of the extra fields its body carries. Everything else reads this table: the
 * ErrorCode names, the AppError classes below (their default messages), GraphQL's
 * `extensions` (code and extras) and the one HTTP error exit (src/server/http-errors.ts:
 * status, headers, `{error, message, ...extras}`). A new code is one new row.
 */
import { bearerChallenge } from './bearer-challenge.js';

/**
 * Every extra body field an error can carry beside `error` and `message` (GraphQL: beside
 * `code` in `extensions`): its JSON type and meaning. The OpenAPI error schema is made from
 * this and the rows below, so a row cannot name a field the document does not describe.
 */
export const ERROR_EXTRA_FIELDS = {
  parameter: { type: 'string', description: 'The offending parameter, body field or header.' },
  minimum_tier: { type: 'string', enum: ['growth', 'enterprise'], description: 'The lowest tier with access.' },
  retry_after_seconds: { type: 'integer', minimum: 1, description: 'Seconds until a request would be admitted (also Retry-After).' },
  resets_at: { type: 'string', format: 'date-time', description: '00:00 UTC on the first day of the next month.' },
  subscription_id: { type: 'string', format: 'uuid', description: 'The existing subscription for this url.' },
  limit: { type: 'integer', minimum: 1, description: 'How many are allowed at once.' },
  from: { type: 'string', description: "The pick's current status." },
  to: { type: 'string', description: 'The status asked for.' },
} as const;

export type ErrorExtraField = keyof typeof ERROR_EXTRA_FIELDS;

export interface ErrorRow {
  readonly status: number;
  /** What the caller reads when the thrower has nothing more specific to say. */
  readonly message: string;
  /** Names of the extra body fields (GraphQL: extensions) this code always carries. */
  readonly extras: readonly ErrorExtraField[];
  /** Retry-After of every answer with this code; a `retry_after_seconds` extra overrides it. */
  readonly retryAfterSeconds?: number;
}

function row(status: number, message: string, extras: readonly ErrorExtraField[] = [], more: Partial<ErrorRow> = {}): ErrorRow {
  return { status, message, extras, ...more };
}

export const ERRORS = {
  invalid_parameter: row(400, 'A parameter has the wrong form or is out of range.', ['parameter']),
  invalid_cursor: row(400, 'after must be the endCursor of a page of this list, passed unchanged.', ['parameter']),
  invalid_request: row(400, 'The request is not valid.'),
  invalid_url: row(400, 'The url must be an https URL of a publicly reachable host.'),
  invalid_api_key: row(401, 'The API key is missing, malformed, unknown or revoked.'),
  admin_required: row(403, 'This operation requires the admin token.'),
  tier_upgrade_required: row(403, 'This endpoint requires a higher tier.', ['minimum_tier']),
  field_not_allowed: row(403, "A stream token may select only the fields of the stream's frame."),
  not_found: row(404, 'The requested resource does not exist.'),
  method_not_allowed: row(405, 'This method is not allowed here.'),
  invalid_transition: row(409, 'The pick cannot change to this status.', ['from', 'to']),
  duplicate_url: row(409, 'A webhook subscription for this url already exists for this API key.', ['subscription_id']),
  payload_too_large: row(413, 'The request body is too large.'),
  query_too_complex: row(400, 'The GraphQL document exceeds the query limits.'),
  request_timeout: row(408, 'The request did not arrive in time.'),
  headers_too_large: row(431, 'The request line and headers are too large.'),
  rate_limit_exceeded: row(429, 'Request limit reached; retry later.', ['retry_after_seconds']),
  monthly_quota_exceeded: row(429, 'Monthly request cap reached.', ['resets_at']),
  subscription_limit: row(429, 'The API key has the maximum number of webhook subscriptions; delete one first.', ['limit']),
  too_many_streams: row(429, 'Too many concurrent streams for this API key; close one first.'),
  stream_token_limit: row(429, 'The API key has minted the most stream tokens allowed in an hour; reuse one or retry later.', ['retry_after_seconds']),
  stream_token_rate_limited: row(429, 'This stream token has opened the most streams allowed in a minute; retry later.', ['retry_after_seconds']),
  internal_error: row(500, 'Unexpected server error; retry with exponential backoff.'),
  service_unavailable: row(503, 'The service is temporarily unavailable; retry with exponential backoff.', [], { retryAfterSeconds: 1 }),
  // Customer accounts and the dashboard (docs/DASHBOARD.md).
  invalid_credentials: row(401, 'Incorrect email or password.'),
  login_throttled: row(429, 'Too many failed sign-in attempts; try again later.', ['retry_after_seconds']),
  session_required: row(401, 'Sign in to the dashboard first; the session is missing or has expired.'),
  invalid_csrf_token: row(403, 'The form has expired or did not come from this site. Reload the page and try again.'),
  duplicate_email: row(409, 'An account with this email already exists.'),
  api_key_limit: row(429, 'The account has the maximum number of active API keys; revoke one first.', ['limit']),
} as const satisfies Record<string, ErrorRow>;

export type ErrorCode = keyof typeof ERRORS;

type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** The codes by name, for code that reads better as `ErrorCode.notFound` than as a string. */
export const ErrorCode = Object.fromEntries(
  Object.keys(ERRORS).map((code) => [code.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()), code]),
) as { readonly [Code in ErrorCode as CamelCase<Code>]: Code };

/** HTTP status per code, read from the table. */
export const ERROR_HTTP_STATUS = Object.fromEntries(Object.entries(ERRORS).map(([code, entry]) => [code, entry.status])) as Readonly<Record<ErrorCode, number>>;

/** The status line and headers of an error answer, whatever the surface writes in its body. */
export interface ErrorHead {
  status: number;
  headers: Record<string, string>;
}

/**
 * The one mapping of a code to its answer's head: the table's status, `Retry-After` (the
 * `retry_after_seconds` extra, else the row's own) and, for a refused key, the Bearer challenge
 * (with `error="invalid_token"` when the request carried a credential). Fastify's error exit
 * and GraphQL's error masking both call it.
 */
export function errorHead(code: ErrorCode, extras: ErrorExtras = {}, credentialSent = false): ErrorHead {
  const entry: ErrorRow = ERRORS[code];
  const headers: Record<string, string> = {};
  const retryAfter = typeof extras.retry_after_seconds === 'number' ? extras.retry_after_seconds : entry.retryAfterSeconds;
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (code === 'invalid_api_key') headers['www-authenticate'] = bearerChallenge(credentialSent);
  return { status: entry.status, headers };
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

export type ErrorExtras = Record<string, string | number | boolean | null>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly extras: ErrorExtras;

  constructor(code: ErrorCode, message: string = ERRORS[code].message, extras: ErrorExtras = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.extras = extras;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** What a thrower's arguments make of an error of its code: the message, and the row's extras. */
type Build<A extends unknown[]> = (...args: A) => { message: string; extras?: ErrorExtras };

/**
 * The error classes, made from the rows (as Fastify's lib/errors.js makes its errors with
 * createError): an AppError of one code, named for stack traces and `instanceof`. Without a
 * builder the constructor takes an optional message in place of the row's; with one, the
 * arguments the row's message and extras need.
 */
function errorClass<A extends unknown[] = [message?: string]>(code: ErrorCode, name: string, build?: Build<A>): new (...args: A) => AppError {
  const Class = class extends AppError {
    constructor(...args: A) {
      const built = build ? build(...args) : { message: (args[0] as string | undefined) ?? ERRORS[code].message };
      super(code, built.message, built.extras);
      this.name = name;
    }
  };
  Object.defineProperty(Class, 'name', { value: name });
  return Class;
}

/** A query parameter, argument or input field has the wrong form or range. */
export const InvalidParameterError = errorClass('invalid_parameter', 'InvalidParameterError', (parameter: string, message: string) => ({ message, extras: { parameter } }));
/**
 * A cursor this list did not give. Named as GraphQL names it (`after`, `endCursor`); the REST
 * adapters rename both (`cursor`, `next_cursor`: adapters/common/params.ts inRestNames).
 */
export const InvalidCursorError = errorClass('invalid_cursor', 'InvalidCursorError', () => ({ message: ERRORS.invalid_cursor.message, extras: { parameter: 'after' } }));
export const NotFoundError = errorClass('not_found', 'NotFoundError');
export const InvalidTransitionError = errorClass('invalid_transition', 'InvalidTransitionError', (from: string, to: string, why?: string) => ({
  message: `A pick in status ${from} cannot become ${to}${why ? `: ${why}` : ''}.`,
  extras: { from, to },
}));
/** A webhook URL is malformed or does not point at a public https host; the message says which. */
export const InvalidUrlError = errorClass('invalid_url', 'InvalidUrlError');
export const InvalidApiKeyError = errorClass('invalid_api_key', 'InvalidApiKeyError');
export const AdminRequiredError = errorClass('admin_required', 'AdminRequiredError');
export const TierUpgradeRequiredError = errorClass('tier_upgrade_required', 'TierUpgradeRequiredError', (minimumTier: string) => ({
  message: `This endpoint requires the ${minimumTier} tier or higher.`,
  extras: { minimum_tier: minimumTier },
}));
/** The hourly sliding window is full. */
export const RateLimitExceededError = errorClass('rate_limit_exceeded', 'RateLimitExceededError', (retryAfterSeconds: number) => ({
  message: `Hourly request limit reached; retry in ${retryAfterSeconds} s.`,
  extras: { retry_after_seconds: retryAfterSeconds },
}));
/** The monthly cap is used up until the first day of the next month, 00:00 UTC. */
export const MonthlyQuotaExceededError = errorClass('monthly_quota_exceeded', 'MonthlyQuotaExceededError', (resetsAt: Date) => ({
  message: `Monthly request cap reached; it resets at ${resetsAt.toISOString()}.`,
  extras: { resets_at: resetsAt.toISOString() },
}));
/** 409: the API key already has a subscription for this URL (checked before the count limit). */
export const DuplicateUrlError = errorClass('duplicate_url', 'DuplicateUrlError', (subscriptionId: string) => ({
  message: ERRORS.duplicate_url.message,
  extras: { subscription_id: subscriptionId },
}));
/** 429: the API key already has the maximum number of webhook subscriptions. */
export const SubscriptionLimitError = errorClass('subscription_limit', 'SubscriptionLimitError', (limit: number) => ({
  message: `An API key can have at most ${limit} webhook subscriptions; delete one first.`,
  extras: { limit },
}));
/** 401: wrong email or password; deliberately the same message for both (no account enumeration). */
export const InvalidCredentialsError = errorClass('invalid_credentials', 'InvalidCredentialsError', () => ({ message: ERRORS.invalid_credentials.message }));
/** 429: too many failed sign-ins for this account or from this address. */
export const LoginThrottledError = errorClass('login_throttled', 'LoginThrottledError', (retryAfterSeconds: number) => ({
  message: `Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} min.`,
  extras: { retry_after_seconds: retryAfterSeconds },
}));
/** 401: the operation needs a signed-in dashboard session (missing, expired or signed out). */
export const SessionRequiredError = errorClass('session_required', 'SessionRequiredError');
/** 403: a state-changing dashboard request without a valid CSRF token. */
export const InvalidCsrfTokenError = errorClass('invalid_csrf_token', 'InvalidCsrfTokenError', () => ({ message: ERRORS.invalid_csrf_token.message }));
/** 409: an account with this email already exists. */
export const DuplicateEmailError = errorClass('duplicate_email', 'DuplicateEmailError', () => ({ message: ERRORS.duplicate_email.message }));
/** 429: the account already has the maximum number of active API keys. */
export const ApiKeyLimitError = errorClass('api_key_limit', 'ApiKeyLimitError', (limit: number) => ({
  message: `An account can have at most ${limit} active API keys; revoke one first.`,
  extras: { limit },
}));
/** 400: a GraphQL document over the depth, cost, alias, directive or token limits (src/graphql/limits.ts). */
export const QueryTooComplexError = errorClass('query_too_complex', 'QueryTooComplexError', (message: string) => ({ message }));
/** 503: a dependency the request needs (the database) cannot be reached right now; retrying later helps. */
export const ServiceUnavailableError = errorClass('service_unavailable', 'ServiceUnavailableError');

/** Each class's instances are AppErrors of its code (for annotations such as `error as InvalidParameterError`). */
export type InvalidParameterError = AppError;
export type InvalidCursorError = AppError;
export type InvalidUrlError = AppError;
export type InvalidTransitionError = AppError;
