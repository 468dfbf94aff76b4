/**
 * A local OTLP/HTTP trace receiver on 127.0.0.1 that decodes what it receives: the service is
 * started with OTEL_EXPORTER_OTLP_PROTOCOL=http/json, so each export is OTLP's JSON encoding of
 * an ExportTraceServiceRequest (ids in hex, attributes as typed AnyValues), read here into plain
 * spans. Anything else (protobuf, another path) is refused with 415/404 and remembered, so a
 * misconfigured exporter fails the test instead of silently sending nothing it can read.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** OTLP's span kinds (SpanKind in trace.proto). */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;
/** OTLP's status codes (Status.StatusCode in trace.proto). */
export const STATUS_CODE = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root span. */
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  /** The instrumentation scope (tracer name) that made it. */
  scope: string;
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests that were not an OTLP/JSON trace export (method, path, content type). */
  refused: string[];
  spansOf(traceId: string): ReceivedSpan[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
}

interface KeyValue {
  key: string;
  value?: AnyValue;
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number; message?: string };
}

interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: JsonSpan[] }[];
  }[];
}

function decodeValue(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  // int64 may come as a decimal string in OTLP/JSON.
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(decodeValue);
  if (value.kvlistValue) return decodeAttributes(value.kvlistValue.values);
  return value.bytesValue;
}

function decodeAttributes(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, decodeValue(value)]));
}

/** The spans of one export, flattened with their resource and scope. */
export function decodeExport(request: ExportTraceServiceRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = decodeAttributes(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        // The root's parent is absent, or an empty string in some encoders.
        parentSpanId: span.parentSpanId ? span.parentSpanId : undefined,
        name: span.name,
        kind: span.kind ?? 0,
        attributes: decodeAttributes(span.attributes),
        status: { code: span.status?.code ?? STATUS_CODE.UNSET, ...(span.status?.message ? { message: span.status.message } : {}) },
        scope: scopeSpans.scope?.name ?? '',
        resource,
      })),
    );
  });
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const contentType = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        refused.push(`${req.method} ${req.url} ${contentType}`);
        res.writeHead(404).end();
        return;
      }
      if (!contentType.startsWith('application/json')) {
        refused.push(`${req.method} ${req.url} ${contentType}`);
        res.writeHead(415).end();
        return;
      }
      try {
        spans.push(...decodeExport(JSON.parse((await bodyOf(req)).toString('utf8')) as ExportTraceServiceRequest));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        refused.push(`undecodable export: ${(error as Error).message}`);
        res.writeHead(400).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    refused,
    spansOf: (traceId) => spans.filter((span) => span.traceId === traceId),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
