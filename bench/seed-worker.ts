import { parentPort } from 'node:worker_threads';
import { WORKLOADS } from './queue-workloads.js';
import { runWorkload } from './run-strategies.js';
import type { SeedOutcome, SeedTask } from './seed-pool.js';

/** A worker thread of seed-pool.ts: simulates one (workload, seed) per message. */
parentPort?.on('message', ({ workload, seed }: SeedTask) => {
  const bench = WORKLOADS.find((w) => w.spec.name === workload);
  if (!bench) throw new Error(`no workload ${workload}`);
  const started = Date.now();
  const result = runWorkload(bench, seed);
  const outcome: SeedOutcome = { result, elapsedMs: Date.now() - started };
  parentPort?.postMessage(outcome);
});
