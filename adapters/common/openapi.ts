/**
 * The OpenAPI 3.1 document is generated from the route definitions by @fastify/swagger.
 * Route schemas are documentation only: requests are validated by the services behind
 * GraphQL (so errors keep the documented codes and check order), and responses are
 * serialised with JSON.stringify; tests validate real responses against the document, lint
 * it with Redocly's recommended rules and generate a typed client from it.
 *
 * What a generated client needs is said here once for every route: the named body schemas
 * (schemas.ts), the error codes each response can carry (from the one error table), the
 * rate-limit headers of every authenticated answer, Retry-After on 429 and 503, 500
 * internal_error, the security of each operation, and the outgoing webhooks.
 */
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import swagger from '@fastify/swagger';
import { ERRORS, type ErrorCode } from '../../src/domain/errors.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhook.js';
import type { ParamSpec } from './params.js';
import { API_SCHEMAS, errorExample, errorSchemaFor, schemaExample, schemaRef } from './schemas.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** A request or response header, as the document describes it. */
export interface HeaderSpec {
  description: string;
  schema: Record<string, unknown>;
  /** Always present on this answer (generated clients then type it as such). */
  required?: boolean;
}

/** @fastify/swagger copies a response header's keywords into its `schema`; this one is moved up. */
const HEADER_REQUIRED = 'x-header-required';

export interface DocumentedRoute {
  operationId: string;
  summary: string;
  description: string;
  /** The route's URL; it decides the tag when `tags` is not given. */
  url?: string;
  params: readonly ParamSpec[];
  /** Request headers the route reads (documented as header parameters). */
  requestHeaders?: Readonly<Record<string, HeaderSpec>>;
  /** A JSON request body (Content-Type: application/json): its schema, for the document. */
  body?: { schema: object };
  responseSchema: object;
  successStatus?: number;
  /** Default: "The <summary> answer." */
  successDescription?: string;
  /** Default application/json. */
  successMediaType?: string;
  /** Default: the named component's example. */
  successExample?: unknown;
  /** Headers of the success answer beside the ones every answer of its kind carries. */
  successHeaders?: Readonly<Record<string, HeaderSpec>>;
  /** Other non-error answers (the public endpoint's 304): status -> description and headers. */
  otherResponses?: Readonly<Record<number, { description: string; headers?: Readonly<Record<string, HeaderSpec>> }>>;
  /**
   * The error codes of this route (src/domain/errors.ts). An HTTP status stands for the usual
   * codes of that status (STATUS_CODES). Authenticated routes always get invalid_api_key, the
   * two limits, internal_error and service_unavailable; routes with parameters invalid_parameter.
   */
  errors: readonly (ErrorCode | number)[];
  tags?: string[];
  anonymous?: boolean;
  /** Headers every error answer of this route carries (the public endpoint's CORS and no-store). */
  errorHeaders?: Readonly<Record<string, HeaderSpec>>;
}

const integerHeader = (description: string): HeaderSpec => ({ description, schema: { type: 'integer', minimum: 0 }, required: true });
const stringHeader = (description: string, example?: string): HeaderSpec => ({
  description,
  schema: { type: 'string', ...(example === undefined ? {} : { examples: [example] }) },
  required: true,
});

/** On every answer to a valid API key, errors included (docs/API.md, "Rate limits"). */
export const RATE_LIMIT_HEADERS: Readonly<Record<string, HeaderSpec>> = {
  'X-RateLimit-Limit': integerHeader("Requests allowed per rolling hour (the key's hourly limit)."),
  'X-RateLimit-Remaining': integerHeader('Requests left in the rolling hour, this one counted; never negative.'),
  'X-RateLimit-Reset': integerHeader('Unix time (seconds) when the oldest request counted in the hour leaves the window.'),
  'RateLimit-Policy': stringHeader('IETF draft RateLimit-Policy: the hourly window and the monthly cap.', '"hourly";q=1000;w=3600, "monthly";q=100000'),
  RateLimit: stringHeader('IETF draft RateLimit: remaining requests (r) and seconds to reset (t) of each policy.', '"hourly";r=999;t=3600, "monthly";r=99999;t=756000'),
};

function optional(headers: Readonly<Record<string, HeaderSpec>>): Record<string, HeaderSpec> {
  return Object.fromEntries(Object.entries(headers).map(([name, spec]) => [name, { ...spec, required: false }]));
}

const REQUEST_ID_HEADER: Readonly<Record<string, HeaderSpec>> = {
  'X-Request-Id': stringHeader("Identifies the request in the service's logs; a caller's own X-Request-Id (8 to 128 of A-Z a-z 0-9 . _ -) is kept."),
};

const RETRY_AFTER_HEADER: Readonly<Record<string, HeaderSpec>> = {
  'Retry-After': integerHeader('Seconds to wait before retrying (equals retry_after_seconds on rate_limit_exceeded; seconds to the next month on monthly_quota_exceeded; 1 on service_unavailable).'),
};

const BEARER_CHALLENGE_HEADER: Readonly<Record<string, HeaderSpec>> = {
  'WWW-Authenticate': stringHeader('RFC 6750 challenge: `Bearer realm="api"`, with `error="invalid_token"` when a credential was sent.', 'Bearer realm="api", error="invalid_token"'),
};

/** The codes an HTTP status stands for in a route's `errors`. */
const STATUS_CODES: Readonly<Record<number, readonly ErrorCode[]>> = {
  400: ['invalid_parameter'],
  401: ['invalid_api_key'],
  403: ['tier_upgrade_required'],
  404: ['not_found'],
  409: ['duplicate_url'],
  413: ['payload_too_large'],
  429: ['rate_limit_exceeded', 'monthly_quota_exceeded'],
  500: ['internal_error'],
  503: ['service_unavailable'],
};

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'No valid API key',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  429: 'Too many requests',
  500: 'Unexpected server error',
  503: 'Temporarily unavailable',
};

/** Every error code this route can answer, by HTTP status, in the error table's order. */
export function routeErrorCodes(route: DocumentedRoute): Map<number, ErrorCode[]> {
  const codes = new Set<ErrorCode>();
  for (const entry of route.errors) {
    if (typeof entry === 'number') {
      for (const code of STATUS_CODES[entry] ?? []) codes.add(code);
      // A 400 of a route with a cursor or a JSON body also stands for their codes.
      if (entry === 400 && route.params.some((spec) => spec.name === 'cursor')) codes.add('invalid_cursor');
      if (entry === 400 && route.body) codes.add('invalid_request');
    } else {
      codes.add(entry);
    }
  }
  if (route.params.length > 0 || route.requestHeaders) codes.add('invalid_parameter');
  if (!route.anonymous) codes.add('invalid_api_key').add('rate_limit_exceeded');
  // The usage endpoint is never counted against the monthly cap: it cannot answer monthly_quota_exceeded.
  if (!route.anonymous && !('usageEndpoint' in route && route.usageEndpoint)) codes.add('monthly_quota_exceeded');
  codes.add('internal_error');
  codes.add('service_unavailable');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    if (!codes.has(code)) continue;
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

function paramSchema(spec: ParamSpec): object {
  const base = { description: spec.description };
  if (spec.type === 'integer') return { ...base, type: 'integer', minimum: spec.minimum, maximum: spec.maximum, default: spec.default };
  return { ...base, type: 'string', ...(spec.format ? { format: spec.format } : {}), ...(spec.enum ? { enum: [...spec.enum] } : {}) };
}

function objectOf(specs: readonly ParamSpec[]): object | undefined {
  if (specs.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(specs.map((spec) => [spec.name, paramSchema(spec)])),
    required: specs.filter((spec) => spec.required).map((spec) => spec.name),
  };
}

/** @fastify/swagger turns `{name: {description, ...schema}}` into response header objects. */
function headersOf(...groups: (Readonly<Record<string, HeaderSpec>> | undefined)[]): Record<string, object> {
  const headers: Record<string, object> = {};
  for (const group of groups) {
    for (const [name, spec] of Object.entries(group ?? {})) {
      headers[name] = { description: spec.description, ...spec.schema, ...(spec.required ? { [HEADER_REQUIRED]: true } : {}) };
    }
  }
  return headers;
}

type HeaderObject = { schema?: Record<string, unknown>; required?: boolean };
type ResponsesOf = Record<string, { responses?: Record<string, { headers?: Record<string, HeaderObject> }> }>;

/** Turns the marker of headersOf into the header object's own `required: true`. */
function hoistRequiredHeaders(document: { paths?: Record<string, ResponsesOf> }): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const header of Object.values(response.headers ?? {})) {
          if (header.schema?.[HEADER_REQUIRED] !== true) continue;
          delete header.schema[HEADER_REQUIRED];
          header.required = true;
        }
      }
    }
  }
}

const TAG_OF_PREFIX: readonly [string, string][] = [
  ['/api/public/', 'Public'],
  ['/api/v1/webhooks', 'Webhooks'],
  ['/api/v1/usage', 'Account'],
];

function tagsOf(route: DocumentedRoute): string[] {
  if (route.tags) return route.tags;
  const url = route.url ?? '';
  return [TAG_OF_PREFIX.find(([prefix]) => url.startsWith(prefix))?.[1] ?? 'Picks'];
}

function errorResponse(route: DocumentedRoute, status: number, codes: readonly ErrorCode[]): object {
  const listed = codes.map((code) => `\`${code}\`: ${ERRORS[code].message}`).join(' ');
  // No valid key (401) or an unread body (413): nothing was counted. A 500 or 503 may come before the count.
  const withLimits = !route.anonymous && status !== 401 && status !== 413;
  const limitsSure = status < 500;
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}. ${listed}`,
    headers: headersOf(
      REQUEST_ID_HEADER,
      withLimits ? (limitsSure ? RATE_LIMIT_HEADERS : optional(RATE_LIMIT_HEADERS)) : undefined,
      status === 429 || status === 503 ? RETRY_AFTER_HEADER : undefined,
      status === 401 ? BEARER_CHALLENGE_HEADER : undefined,
      route.errorHeaders,
    ),
    content: {
      'application/json': {
        schema: errorSchemaFor(codes),
        examples: Object.fromEntries(codes.map((code) => [code, { summary: code, value: errorExample(code) }])),
      },
    },
  };
}

/**
 * A response schema without `additionalProperties: false` anywhere: a field added later must not
 * break a client that validates with the document (docs/API.md, "Versioning").
 */
export function openToAdditions<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(openToAdditions) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).filter(([key, value]) => !(key === 'additionalProperties' && value === false)).map(([key, value]) => [key, openToAdditions(value)]),
  ) as T;
}

const passThroughValidator = () => () => true;
const plainSerializer = () => (data: unknown) => JSON.stringify(data);

export function openApiRouteSchema(route: DocumentedRoute): RouteShorthandOptions['schema'] {
  const successStatus = route.successStatus ?? 200;
  const successHeaders = headersOf(REQUEST_ID_HEADER, route.anonymous ? undefined : RATE_LIMIT_HEADERS, route.successHeaders);
  const successDescription = route.successDescription ?? `${route.summary}.`;
  const isEmpty = (route.responseSchema as { type?: unknown }).type === 'null';
  const example = route.successExample ?? schemaExample(route.responseSchema);
  const response: Record<string, object> = {
    [successStatus]: isEmpty
      ? { type: 'null', description: successDescription, headers: successHeaders }
      : {
          description: successDescription,
          headers: successHeaders,
          content: { [route.successMediaType ?? 'application/json']: { schema: openToAdditions(route.responseSchema), ...(example === undefined ? {} : { example }) } },
        },
  };
  for (const [status, other] of Object.entries(route.otherResponses ?? {})) {
    response[status] = { type: 'null', description: other.description, headers: headersOf(REQUEST_ID_HEADER, other.headers) };
  }
  for (const [status, codes] of routeErrorCodes(route)) response[status] = errorResponse(route, status, codes);
  const querystring = objectOf(route.params.filter((spec) => spec.in === 'query'));
  const params = objectOf(route.params.filter((spec) => spec.in === 'path'));
  const headers = route.requestHeaders
    ? { type: 'object', properties: Object.fromEntries(Object.entries(route.requestHeaders).map(([name, spec]) => [name, { description: spec.description, ...spec.schema }])) }
    : undefined;
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: tagsOf(route),
    security: route.anonymous ? [] : [{ bearerAuth: [] }],
    ...(querystring ? { querystring } : {}),
    ...(params ? { params } : {}),
    ...(headers ? { headers } : {}),
    ...(route.body ? { body: route.body.schema } : {}),
    response,
  } as RouteShorthandOptions['schema'];
}

export const WEBHOOK_REQUEST_HEADERS: readonly [string, string, Record<string, unknown>][] = [
  ['X-Service-Signature', '`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the subscription\'s hmac_secret string. Compare in constant time.', { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' }],
  ['X-Service-Event', 'The event type, as in the body.', { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }],
  ['X-Service-Delivery', 'The delivery id, the same on every retry of one delivery: de-duplicate on it.', { type: 'string', format: 'uuid' }],
  ['webhook-id', 'Standard Webhooks: the delivery id.', { type: 'string', format: 'uuid' }],
  ['webhook-timestamp', 'Standard Webhooks: unix seconds of this attempt; reject old ones for replay protection.', { type: 'string', pattern: '^[0-9]+$' }],
  [
    'webhook-signature',
    'Standard Webhooks: `v1,` + base64 HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of the secret after `whsec_`; during the 24 h after a rotation also the old secret\'s signature, space-separated.',
    { type: 'string' },
  ],
  ['User-Agent', 'Names the service and the delivery format version.', { type: 'string', examples: ['PicksAPI-Webhooks/1.0'] }],
];

/** The outgoing deliveries (OpenAPI 3.1 `webhooks`): one POST per event type. */
function webhookOperations(): Record<string, object> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace('.', '_')}_delivery`,
          summary: `${type} delivery`,
          description:
            `POSTed to each active subscription that chose \`${type}\`. Success is a 2xx within 10 s; redirects are not followed. ` +
            'A failed attempt is retried 1 min, 5 min, 30 min, 2 h and 12 h later; when the fifth retry fails the subscription becomes `exhausted`.',
          tags: ['Webhooks'],
          security: [],
          parameters: WEBHOOK_REQUEST_HEADERS.map(([name, description, schema]) => ({ name, in: 'header', required: name !== 'User-Agent', description, schema })),
          requestBody: {
            required: true,
            description: 'The event. Verify the signature over these exact bytes before parsing.',
            content: {
              'application/json': {
                schema: { allOf: [schemaRef('WebhookEvent')], properties: { type: { const: type } } },
                example: { ...(schemaExample(schemaRef('WebhookEvent')) as object), type },
              },
            },
          },
          responses: {
            '200': { description: 'Any 2xx within 10 s acknowledges the delivery; the first 4 KiB of the answer is kept in the deliveries log.' },
            default: { description: 'Anything else (or no answer within 10 s) is a failed attempt, retried on the schedule.' },
          },
        },
      },
    ]),
  );
}

/** Registers @fastify/swagger; must run before the documented routes are added. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.setValidatorCompiler(passThroughValidator);
  app.setSerializerCompiler(plainSerializer);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sports-Betting Picks Service API',
        version: '1.0.0',
        description:
          'Picks with their edge against a sharp reference bookmaker, a track record, match analyses, webhooks and a picks stream for API keys (`/api/v1`), ' +
          "and today's top picks for anyone (`/api/public/picks/today`). A reference for people is served at `/docs`.\n\n" +
          'Checks run in this order: 401 `invalid_api_key`, 429 limits, 403 `tier_upgrade_required`, 400 for a parameter or body of the wrong form. ' +
          'Every answer to a valid key counts one request (429 excepted) and carries the rate-limit headers. ' +
          'Errors are JSON `{error, message, ...}`; each response lists the codes it can carry. Clients must ignore fields they do not know: adding one is not a breaking change.',
      },
      servers: [{ url: '/', description: 'The service that serves this document' }],
      tags: [
        { name: 'Picks', description: 'Picks, track record, match analyses and the picks stream (API key).' },
        { name: 'Webhooks', description: 'Webhook subscriptions and their deliveries (Growth and Enterprise), and the deliveries the service sends.' },
        { name: 'Account', description: "The API key's own usage." },
        { name: 'Public', description: "Today's top picks: anonymous, CORS-open, CDN-cached." },
      ],
      components: {
        schemas: API_SCHEMAS as unknown as Record<string, object>,
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: '`Authorization: Bearer service_` followed by 64 lowercase hex characters. Missing, malformed, unknown or revoked: 401 `invalid_api_key`.',
          },
        },
      },
      webhooks: webhookOperations(),
    } as never,
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      hoistRequiredHeaders(document as { paths?: Record<string, ResponsesOf> });
      return document;
    },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
