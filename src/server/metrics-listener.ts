/**
 * The metrics listener: `GET /metrics` in the Prometheus text format on METRICS_HOST and
 * METRICS_PORT, a listener of its own, never the public port, so a deployment that publishes
 * the service does not publish its metrics by accident. Anything else answers 404.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceMetrics } from '../services/metrics/metrics.js';

export interface MetricsListener {
  /** Where it listens (the port the system gave for port 0). */
  readonly address: AddressInfo;
  close(): Promise<void>;
}

type Log = { error(fields: object, message: string): void };

export async function startMetricsListener(metrics: ServiceMetrics, host: string, port: number, log?: Log): Promise<MetricsListener> {
  // The serving instance also reports the Node.js runtime (event loop, heap, GC, CPU).
  metrics.collectDefaults();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: the metrics are at GET /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        log?.error({ err: error }, 'metrics: collecting failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('collecting the metrics failed; see the service log\n');
      },
    );
  });
  // A scraper keeps its connection; idle ones must not hold the shutdown.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
