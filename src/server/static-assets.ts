/**
 * Static assets (scripts, stylesheets, icons) answered compressed, for every route that serves
 * one (docs/PERFORMANCE.md, "Compressed static assets"). One onSend hook for the whole app, so
 * the routes of packages (Scalar's bundle under /docs) and of every adapter are treated alike:
 *
 * - the content coding follows Accept-Encoding (brotli, then gzip, else identity; q=0 and
 *   identity;q=0 respected), with `Vary: Accept-Encoding` on every answer;
 * - each body is compressed once per coding, on the first request that asks for it, in zlib's
 *   thread pool (the event loop keeps serving), and kept in memory beside the body it came from:
 *   the routes send the same Buffer (or string) every time, which is the key;
 * - every representation has its own strong ETag, and a matching If-None-Match gets 304;
 * - a body already encoded (Content-Encoding set) is left alone: never compressed twice.
 *
 * Cache-Control is the route's: `IMMUTABLE_CACHE_CONTROL` for file names carrying their content's
 * hash (`hashedFileName`), a revalidated one (ETag) for the others.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** A file whose name carries its content's hash never changes: a year, and no revalidation. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** A file under a fixed name: kept, but asked again (If-None-Match) before each use. */
export const REVALIDATED_CACHE_CONTROL = 'public, no-cache';

export type ContentCoding = 'br' | 'gzip' | 'identity';
type Compressed = Exclude<ContentCoding, 'identity'>;

/**
 * Brotli quality 5: on the 4.9 MB Scalar bundle about 0.15 s of one core for 1.24 MB, where
 * quality 11 (zlib's default) takes 8.5 s for 1.06 MB (docs/PERFORMANCE.md). gzip at zlib's
 * default level 6. Both once per body and process.
 */
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;
/** Below this, compression saves less than the headers it costs. */
export const MIN_COMPRESSED_BYTES = 1024;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** `graphiql.js` and its content -> `graphiql.<16 hex digits of its SHA-256>.js`. */
export function hashedFileName(name: string, body: Buffer | string): string {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? `${name}.${hash}` : `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
}

/**
 * The coding to answer with (RFC 9110, 12.5.3): the acceptable one with the highest weight, brotli
 * before gzip before identity on a tie. No header: identity. A coding is acceptable with a weight
 * above 0, named or through `*`; identity also when not named at all, but then after any coding
 * named (`br;q=0.5` still means "br rather than nothing"). When nothing is acceptable
 * (`identity;q=0` and no known coding), identity all the same: the RFC's advice is to answer
 * without a coding rather than refuse.
 */
export function negotiateContentCoding(acceptEncoding: string | string[] | undefined): ContentCoding {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (header === undefined) return 'identity';
  const weights = new Map<string, number>();
  for (const element of header.split(',')) {
    const [name, ...parameters] = element.split(';').map((part) => part.trim().toLowerCase());
    if (!name) continue;
    let weight = 1;
    for (const parameter of parameters) {
      const q = /^q\s*=\s*(.*)$/.exec(parameter)?.[1];
      // A weight is 0 to 1 with up to three decimals; a malformed one makes the element unacceptable.
      if (q !== undefined) weight = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(q) ? Number(q) : 0;
    }
    const coding = name === 'x-gzip' ? 'gzip' : name;
    // Repeated: the first one counts.
    if (!weights.has(coding)) weights.set(coding, weight);
  }
  const wildcard = weights.get('*');
  const weightOf = (coding: ContentCoding) => weights.get(coding) ?? wildcard ?? (coding === 'identity' ? Number.MIN_VALUE : 0);
  let best: ContentCoding = 'identity';
  let bestWeight = 0;
  for (const coding of ['br', 'gzip', 'identity'] as const) {
    const weight = weightOf(coding);
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

/** If-None-Match against one ETag, by the weak comparison RFC 9110 prescribes for it. */
export function matchesIfNoneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (typeof ifNoneMatch !== 'string') return false;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === opaque;
  });
}

interface Representation {
  body: Buffer;
  coding: ContentCoding;
  etag: string;
}

/** One body as served: its identity form and its compressed forms, made on first demand. */
class EncodedBody {
  readonly identity: Representation;
  readonly #hash: string;
  readonly #encoded = new Map<Compressed, Promise<Representation>>();

  constructor(body: Buffer) {
    this.#hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    this.identity = { body, coding: 'identity', etag: `"${this.#hash}"` };
  }

  /** The representation for `coding`; identity when compressing would not pay (or failed). */
  representation(coding: ContentCoding, contentType: string, onError: (error: unknown) => void): Promise<Representation> {
    if (coding === 'identity' || this.identity.body.length < MIN_COMPRESSED_BYTES || !isCompressibleType(contentType)) return Promise.resolve(this.identity);
    let encoded = this.#encoded.get(coding);
    if (!encoded) {
      encoded = compress(this.identity.body, coding).then(
        (body): Representation => (body.length < this.identity.body.length ? { body, coding, etag: `"${this.#hash}-${coding}"` } : this.identity),
        (error: unknown) => {
          onError(error);
          return this.identity;
        },
      );
      this.#encoded.set(coding, encoded);
    }
    return encoded;
  }
}

function compress(body: Buffer, coding: Compressed): Promise<Buffer> {
  return coding === 'br'
    ? brotli(body, {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
          [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      })
    : gzipped(body, { level: GZIP_LEVEL });
}

/** Text formats compress; images other than SVG, fonts and archives are compressed already. */
function isCompressibleType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type.startsWith('text/') || /^application\/(?:javascript|json|xml|manifest\+json|wasm)$/.test(type) || type === 'image/svg+xml';
}

/**
 * The bodies seen so far, keyed by the very object a route sends: a Buffer weakly (it goes when
 * the route does), a string strongly, and only a few (package bundles are constant strings; a
 * route that built a new string per answer must not grow this without bound).
 */
const bufferBodies = new WeakMap<Buffer, EncodedBody>();
const stringBodies = new Map<string, EncodedBody>();
const MAX_STRING_BODIES = 16;

function encodedBodyOf(payload: Buffer | string): EncodedBody {
  if (typeof payload === 'string') {
    let known = stringBodies.get(payload);
    if (!known) {
      known = new EncodedBody(Buffer.from(payload, 'utf8'));
      if (stringBodies.size < MAX_STRING_BODIES) stringBodies.set(payload, known);
    }
    return known;
  }
  let known = bufferBodies.get(payload);
  if (!known) {
    known = new EncodedBody(payload);
    bufferBodies.set(payload, known);
  }
  return known;
}

function withVary(current: unknown, name: string): string {
  const values = (Array.isArray(current) ? current.join(',') : typeof current === 'string' ? current : '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return values.some((value) => value === '*' || value.toLowerCase() === name.toLowerCase()) ? values.join(', ') : [...values, name].join(', ');
}

/** The answer of a static asset route, as the module comment says. */
export async function encodeStaticAsset(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return payload;
  if (reply.statusCode !== 200 || reply.hasHeader('content-encoding')) return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;

  const encoded = encodedBodyOf(payload);
  const coding = negotiateContentCoding(req.headers['accept-encoding']);
  const chosen = await encoded.representation(coding, String(reply.getHeader('content-type') ?? ''), (error) => req.log.warn({ err: error, coding }, 'compressing a static asset failed; it is served uncompressed'));
  reply.header('vary', withVary(reply.getHeader('vary'), 'Accept-Encoding')).header('etag', chosen.etag).header('x-content-type-options', 'nosniff');
  if (chosen.coding !== 'identity') reply.header('content-encoding', chosen.coding);
  if (matchesIfNoneMatch(req.headers['if-none-match'], chosen.etag)) {
    // The length the 200 would have (RFC 9110, 8.6); HEAD's own hook measures the payload it is handed.
    reply.code(304).header('content-length', String(chosen.body.length));
    return req.method === 'HEAD' ? chosen.body : null;
  }
  return chosen.body;
}

/**
 * Installs the hook on `app` for the routes `isAssetRoute` names (by route URL, e.g.
 * `/graphql/assets/:file`). Register before the routes' plugins so every scope inherits it.
 */
export function registerStaticAssetEncoding(app: FastifyInstance, isAssetRoute: (routeUrl: string) => boolean): void {
  app.addHook('onSend', async (req, reply, payload) => {
    const url = req.routeOptions.url;
    if (url === undefined || !isAssetRoute(url)) return payload;
    return encodeStaticAsset(req, reply, payload);
  });
}
