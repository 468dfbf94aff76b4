/**
 * The one error hierarchy of the service. Every failure a caller can cause is an
 * AppError with a stable, documented `code` (spec section 7, DESIGN section 3).
 * GraphQL puts `code` and `extras` into `extensions`; the REST adapters map the code
 * to an HTTP status once (see ERROR_HTTP_STATUS).
 */
export const ErrorCode = {
  invalidParameter: 'invalid_parameter',
  invalidCursor: 'invalid_cursor',
  invalidRequest: 'invalid_request',
  invalidUrl: 'invalid_url',
  invalidApiKey: 'invalid_api_key',
  adminRequired: 'admin_required',
  tierUpgradeRequired: 'tier_upgrade_required',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  invalidTransition: 'invalid_transition',
  duplicateUrl: 'duplicate_url',
  payloadTooLarge: 'payload_too_large',
  queryTooComplex: 'query_too_complex',
  requestTimeout: 'request_timeout',
  headersTooLarge: 'headers_too_large',
  rateLimitExceeded: 'rate_limit_exceeded',
  monthlyQuotaExceeded: 'monthly_quota_exceeded',
  subscriptionLimit: 'subscription_limit',
  tooManyStreams: 'too_many_streams',
  internalError: 'internal_error',
  serviceUnavailable: 'service_unavailable',
  // Customer accounts and the dashboard (docs/DASHBOARD.md).
  invalidCredentials: 'invalid_credentials',
  loginThrottled: 'login_throttled',
  sessionRequired: 'session_required',
  invalidCsrfToken: 'invalid_csrf_token',
  duplicateEmail: 'duplicate_email',
  apiKeyLimit: 'api_key_limit',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP status per code: the single mapping used by every HTTP surface. */
export const ERROR_HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_parameter: 400,
  invalid_cursor: 400,
  invalid_request: 400,
  invalid_url: 400,
  invalid_api_key: 401,
  admin_required: 403,
  tier_upgrade_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_transition: 409,
  duplicate_url: 409,
  payload_too_large: 413,
  query_too_complex: 400,
  request_timeout: 408,
  headers_too_large: 431,
  rate_limit_exceeded: 429,
  monthly_quota_exceeded: 429,
  subscription_limit: 429,
  too_many_streams: 429,
  internal_error: 500,
  service_unavailable: 503,
  invalid_credentials: 401,
  login_throttled: 429,
  session_required: 401,
  invalid_csrf_token: 403,
  duplicate_email: 409,
  api_key_limit: 429,
};

export type ErrorExtras = Record<string, string | number | boolean | null>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly extras: ErrorExtras;

  constructor(code: ErrorCode, message: string, extras: ErrorExtras = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.extras = extras;
  }
}

/** A query parameter, argument or input field has the wrong form or range. */
export class InvalidParameterError extends AppError {
  constructor(parameter: string, message: string) {
    super(ErrorCode.invalidParameter, message, { parameter });
    this.name = 'InvalidParameterError';
  }
}

export class InvalidCursorError extends AppError {
  constructor(message = 'The cursor is malformed; pass next_cursor from a previous response unchanged.') {
    super(ErrorCode.invalidCursor, message);
    this.name = 'InvalidCursorError';
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'The requested resource does not exist.') {
    super(ErrorCode.notFound, message);
    this.name = 'NotFoundError';
  }
}

export class InvalidTransitionError extends AppError {
  constructor(from: string, to: string) {
    super(ErrorCode.invalidTransition, `A pick in status ${from} cannot become ${to}.`, { from, to });
    this.name = 'InvalidTransitionError';
  }
}

/** A webhook URL is malformed or does not point at a public https host; the message says which. */
export class InvalidUrlError extends AppError {
  constructor(message = 'The url must be an https URL of a publicly reachable host.') {
    super(ErrorCode.invalidUrl, message);
    this.name = 'InvalidUrlError';
  }
}

export class InvalidApiKeyError extends AppError {
  constructor(message = 'The API key is missing, malformed, unknown or revoked.') {
    super(ErrorCode.invalidApiKey, message);
    this.name = 'InvalidApiKeyError';
  }
}

export class AdminRequiredError extends AppError {
  constructor(message = 'This operation requires the admin token.') {
    super(ErrorCode.adminRequired, message);
    this.name = 'AdminRequiredError';
  }
}

export class TierUpgradeRequiredError extends AppError {
  constructor(minimumTier: string) {
    super(ErrorCode.tierUpgradeRequired, `This endpoint requires the ${minimumTier} tier or higher.`, {
      minimum_tier: minimumTier,
    });
    this.name = 'TierUpgradeRequiredError';
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** The hourly sliding window is full. */
export class RateLimitExceededError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(ErrorCode.rateLimitExceeded, `Hourly request limit reached; retry in ${retryAfterSeconds} s.`, {
      retry_after_seconds: retryAfterSeconds,
    });
    this.name = 'RateLimitExceededError';
  }
}

/** The monthly cap is used up until the first day of the next month, 00:00 UTC. */
export class MonthlyQuotaExceededError extends AppError {
  constructor(resetsAt: Date) {
    super(ErrorCode.monthlyQuotaExceeded, `Monthly request cap reached; it resets at ${resetsAt.toISOString()}.`, {
      resets_at: resetsAt.toISOString(),
    });
    this.name = 'MonthlyQuotaExceededError';
  }
}

/** 409: the API key already has a subscription for this URL (checked before the count limit). */
export class DuplicateUrlError extends AppError {
  constructor(subscriptionId: string) {
    super(ErrorCode.duplicateUrl, 'A webhook subscription for this url already exists for this API key.', { subscription_id: subscriptionId });
    this.name = 'DuplicateUrlError';
  }
}

/** 429: the API key already has the maximum number of webhook subscriptions. */
export class SubscriptionLimitError extends AppError {
  constructor(limit: number) {
    super(ErrorCode.subscriptionLimit, `An API key can have at most ${limit} webhook subscriptions; delete one first.`, { limit });
    this.name = 'SubscriptionLimitError';
  }
}

/** 401: wrong email or password; deliberately the same message for both (no account enumeration). */
export class InvalidCredentialsError extends AppError {
  constructor() {
    super(ErrorCode.invalidCredentials, 'Incorrect email or password.');
    this.name = 'InvalidCredentialsError';
  }
}

/** 429: too many failed sign-ins for this account or from this address. */
export class LoginThrottledError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(ErrorCode.loginThrottled, `Too many failed sign-in attempts. Try again in ${Math.ceil(retryAfterSeconds / 60)} min.`, {
      retry_after_seconds: retryAfterSeconds,
    });
    this.name = 'LoginThrottledError';
  }
}

/** 401: the operation needs a signed-in dashboard session (missing, expired or signed out). */
export class SessionRequiredError extends AppError {
  constructor(message = 'Sign in to the dashboard first; the session is missing or has expired.') {
    super(ErrorCode.sessionRequired, message);
    this.name = 'SessionRequiredError';
  }
}

/** 403: a state-changing dashboard request without a valid CSRF token. */
export class InvalidCsrfTokenError extends AppError {
  constructor() {
    super(ErrorCode.invalidCsrfToken, 'The form has expired or did not come from this site. Reload the page and try again.');
    this.name = 'InvalidCsrfTokenError';
  }
}

/** 409: an account with this email already exists. */
export class DuplicateEmailError extends AppError {
  constructor() {
    super(ErrorCode.duplicateEmail, 'An account with this email already exists.');
    this.name = 'DuplicateEmailError';
  }
}

/** 429: the account already has the maximum number of active API keys. */
export class ApiKeyLimitError extends AppError {
  constructor(limit: number) {
    super(ErrorCode.apiKeyLimit, `An account can have at most ${limit} active API keys; revoke one first.`, { limit });
    this.name = 'ApiKeyLimitError';
  }
}

/** 400: a GraphQL document over the depth, cost, alias, directive or token limits (src/graphql/limits.ts). */
export class QueryTooComplexError extends AppError {
  constructor(message: string) {
    super(ErrorCode.queryTooComplex, message);
    this.name = 'QueryTooComplexError';
  }
}

/** 503: a dependency the request needs (the database) cannot be reached right now; retrying later helps. */
export class ServiceUnavailableError extends AppError {
  constructor(message = 'The service is temporarily unavailable; retry with exponential backoff.') {
    super(ErrorCode.serviceUnavailable, message);
    this.name = 'ServiceUnavailableError';
  }
}

/** Seconds a 503 `service_unavailable` asks the client to wait (Retry-After). */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;
