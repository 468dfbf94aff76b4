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
  rateLimitExceeded: 'rate_limit_exceeded',
  monthlyQuotaExceeded: 'monthly_quota_exceeded',
  subscriptionLimit: 'subscription_limit',
  tooManyStreams: 'too_many_streams',
  internalError: 'internal_error',
  serviceUnavailable: 'service_unavailable',
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
  rate_limit_exceeded: 429,
  monthly_quota_exceeded: 429,
  subscription_limit: 429,
  too_many_streams: 429,
  internal_error: 500,
  service_unavailable: 503,
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
