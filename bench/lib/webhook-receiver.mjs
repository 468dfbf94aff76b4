/**
 * The one local webhook receiver of the benches and the soak: a node:https server on
 * 127.0.0.1 and a free port presenting the test certificate (test/fixtures/tls: SANs
 * hooks.test, *.hooks.test, localhost, 127.0.0.1; the service trusts its CA through
 * NODE_EXTRA_CA_CERTS and maps hooks.test to 127.0.0.1 with WEBHOOK_HOST_OVERRIDES).
 * Each request's body is read whole, then `onDelivery({ req, raw, at })` (at: `clock()` when
 * the handler ran, i.e. when the request head had been parsed) answers it with
 * { status, body } (default 200, empty). Keep-alive connections stay open a minute, so they
 * last between the rates of a run. Users: webhooks-receiver.mjs (the IPC child of
 * bench:webhooks and bench:engine, recording arrivals) and soak/receiver.mjs (verifying
 * signatures, failing a share of attempts).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import path from 'node:path';
import { HOST, ROOT, wallNow } from '../common.mjs';

const TLS_DIR = path.join(ROOT, 'test/fixtures/tls');

export async function startWebhookReceiver({ onDelivery, clock = wallNow, backlog = 1024 }) {
  const counters = { tlsConnections: 0, tlsErrors: 0 };
  const server = createServer({ cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) }, (req, res) => {
    const at = clock();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const { status = 200, body = '' } = onDelivery({ req, raw: Buffer.concat(chunks), at }) ?? {};
      res.on('error', () => {});
      res.writeHead(status, body ? { 'content-type': 'text/plain' } : { 'content-length': '0' });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  server.on('secureConnection', () => {
    counters.tlsConnections += 1;
  });
  server.on('tlsClientError', () => {
    counters.tlsErrors += 1;
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: HOST, backlog }, resolve);
  });
  return {
    port: server.address().port,
    counters,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
