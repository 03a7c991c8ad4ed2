import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The service's own metrics (GET /metrics, for operators), apart from the
 * per-organization queue metrics of the v1 API. One registry per process;
 * modules record into the instruments below.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'mq_http_request_duration_seconds',
    help: 'HTTP request latency by route and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'mq_webhook_deliveries_total',
    help: 'Outgoing webhook delivery attempts by result (delivered, failed, timeout, refused, disabled).',
    labelNames: ['result'],
    registers: [this.registry],
  });

  readonly githubRequests = new Counter({
    name: 'mq_github_requests_total',
    help: 'GitHub API calls by method and status code.',
    labelNames: ['method', 'status'],
    registers: [this.registry],
  });

  readonly githubRateLimitRemaining = new Gauge({
    name: 'mq_github_rate_limit_remaining',
    help: 'Requests left in the GitHub rate-limit window of the last call made (installations each have their own window).',
    registers: [this.registry],
  });

  readonly engineDecisions = new Counter({
    name: 'mq_engine_decisions_total',
    help: 'Events the queue engine decided on, by event type.',
    labelNames: ['event'],
    registers: [this.registry],
  });

  readonly engineActions = new Counter({
    name: 'mq_engine_actions_total',
    help: 'Actions the queue engine decided, by action type.',
    labelNames: ['action'],
    registers: [this.registry],
  });

  readonly queueDepth = new Gauge({
    name: 'mq_queue_depth',
    help: 'Pull requests enqueued, per queue (host/owner/name@branch), as of the last scrape.',
    labelNames: ['queue'],
    registers: [this.registry],
  });

  readonly hostOutage = new Gauge({
    name: 'mq_queue_host_outage',
    help: '1 while the repository host of a queue fails and its actions are retried with back-off, per queue id.',
    labelNames: ['queue'],
    registers: [this.registry],
  });

  readonly queueStalled = new Gauge({
    name: 'mq_queue_stalled',
    help: '1 while a queue has not moved for its stallAlertMinutes with PRs waiting, per queue id.',
    labelNames: ['queue'],
    registers: [this.registry],
  });

  readonly hostRetries = new Counter({
    name: 'mq_host_action_retries_total',
    help: 'Host actions retried after a host failure (5xx, time-out, rate limit, no answer), by action.',
    labelNames: ['action'],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    // Node's own metrics (event loop lag, heap, GC): what an operator looks at first.
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'mq_process_' });
  }
}
