import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WorkloadResult } from './run-strategies.js';

/** One workload on one seed, simulated in a worker thread. */
export interface SeedTask {
  workload: string;
  seed: number;
}

export interface SeedOutcome {
  result: WorkloadResult;
  /** Wall time in the worker. */
  elapsedMs: number;
}

/**
 * Simulates (workload, seed) pairs on every core: each pair is independent and
 * deterministic, so running them apart changes no number, only the wall time
 * (five seeds of every workload would take minutes on one core). The promises
 * come back in the order of the tasks; tasks start in that order too.
 */
export function runOnCores(tasks: SeedTask[], threads = availableParallelism()): Array<Promise<SeedOutcome>> {
  const settlers = tasks.map(() => {
    let settle!: { resolve: (o: SeedOutcome) => void; reject: (e: unknown) => void };
    const promise = new Promise<SeedOutcome>((resolve, reject) => (settle = { resolve, reject }));
    return { promise, settle };
  });
  let next = 0;
  const workerCount = Math.max(1, Math.min(threads, tasks.length));
  for (let w = 0; w < workerCount; w++) {
    const worker = new Worker(new URL('./seed-worker.js', import.meta.url));
    let current = -1;
    const feed = () => {
      current = next++;
      const task = tasks[current];
      if (task) worker.postMessage(task);
      else void worker.terminate();
    };
    worker.on('message', (outcome: SeedOutcome) => {
      settlers[current]?.settle.resolve(outcome);
      feed();
    });
    // A worker that threw is gone; the run fails at that task (the others need not finish).
    worker.on('error', (error) => settlers[current]?.settle.reject(error));
    feed();
  }
  return settlers.map((s) => s.promise);
}
