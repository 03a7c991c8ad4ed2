import type { EnqueuedEntriesCache } from '../queue/enqueued-cache.js';
import type { Stores } from '../ports/stores.js';
import type { PullRequestService } from '../queue/pull-request-service.js';
import type { QueueService } from '../queue/queue-service.js';
import type { TokenService } from '../tokens/token-service.js';
import type { QueueRunner } from '../runner/queue-runner.js';

/** What the HTTP layer needs from the application; built once in build-server. */
export interface ApiDeps {
  stores: Stores;
  tokens: TokenService;
  queues: QueueService;
  pullRequests: PullRequestService;
  runner: QueueRunner;
  now: () => Date;
  /** Enqueued entries of queues viewed lately, valid until their runner records something. */
  enqueuedCache: EnqueuedEntriesCache;
}
