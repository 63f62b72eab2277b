import type { RequestHandler } from 'express';
import client from 'prom-client';
import { z } from 'zod';
import { QUEUE_NAMES, withTimeout, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { defineRoutes } from '../openapi/api-route';

export const metricsApi = defineRoutes({
  metrics: {
    method: 'get',
    path: '/metrics',
    tag: 'health',
    summary: 'Prometheus metrics: HTTP, event streams, queue depths, turns, model and tool calls',
    auth: 'none',
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain', schema: z.string() } },
  },
});

/** How long a scrape waits for the queues' counts: well within Prometheus's 10 s scrape timeout. */
const QUEUE_COUNTS_TIMEOUT_MS = 2_000;

/**
 * GET /metrics: this gateway's own metrics (HTTP, open event streams, queue depths read at
 * scrape time) followed by the counters every process shares through Redis (turns, model
 * calls, tool calls). While Redis does not answer, the series read from it are left out.
 */
export function createGatewayMetrics(runtime: Runtime, openStreams: () => number) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'assistant_gateway_' });
  const requests = new client.Counter({
    name: 'assistant_http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'assistant_http_request_duration_seconds',
    help: 'HTTP request duration (for event streams: until the response started).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new client.Gauge({
    name: 'assistant_sse_open_streams',
    help: 'Event streams open on this gateway.',
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
  new client.Gauge({
    name: 'assistant_queue_jobs',
    help: 'Jobs per queue and state.',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      // Counts Redis cannot give now (BullMQ waits for a connection that is down) are left out,
      // never served stale from an earlier scrape.
      this.reset();
      await Promise.all(
        QUEUE_NAMES.map(async (name) => {
          const counting = runtime.queues[name].getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
          const counts = await withTimeout(counting, QUEUE_COUNTS_TIMEOUT_MS, 'queue counts').catch(() => ({}));
          for (const [state, count] of Object.entries(counts)) this.set({ queue: name, state }, count);
        }),
      );
    },
  });

  const track: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      // The matched route pattern, never the raw path: ids must not become label values.
      const matched = req.route as { path: unknown } | undefined;
      const route = matched ? `${req.baseUrl}${String(matched.path)}` : 'unmatched';
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
      end({ method: req.method, route });
    });
    next();
  };

  const router = apiRouter(metricsApi, {
    metrics: async (_req, res) => {
      // While Redis does not answer, this gateway's own metrics are served without the shared ones.
      const [own, shared] = await Promise.all([registry.metrics(), runtime.metrics.render().catch(() => '')]);
      res.type(registry.contentType).send(`${own}\n${shared}`);
    },
  });
  return { track, router };
}
