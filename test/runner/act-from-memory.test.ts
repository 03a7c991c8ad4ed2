/**
 * The host-action loop takes the decisions it carries out from the writer's
 * memory, not from the log: the local FerretDB answers a read of the log by
 * reading every stored decision. Everything decided is still carried out (each
 * PR shows its final status on the sandbox), and a writer that loads a queue
 * reads the log once for what is left to do. Becoming a queue's writer, the
 * runner forgets this process's copies of the queue's entries (the writer
 * before it may have changed them; its own writes extend those copies).
 */
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: ApiHarness;
let token: string;
let logReads = 0;
const forgotten: string[] = [];
beforeAll(async () => {
  h = await startApiHarness({ prefix: 'act_memory', sandboxTimeScale: 0.01 });
  token = await h.tokenFor('demo', 'sandbox');
  const engine = h.stores.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const decisionsAfter = engine.decisionsAfter!.bind(engine);
  engine.decisionsAfter = async (...args: unknown[]) => {
    logReads++;
    return decisionsAfter(...args);
  };
  const entries = h.stores.entries as unknown as Record<string, (...args: unknown[]) => unknown>;
  const forgetWritten = entries.forgetWritten!.bind(entries);
  entries.forgetWritten = (queueId: unknown) => {
    forgotten.push(String(queueId));
    return forgetWritten(queueId);
  };
});
afterAll(() => h.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body, token);
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

test('ten PRs are tested, merged and shown on the host without the action loop reading the log', async () => {
  const repo = { host: 'sandbox', owner: 'demo', name: 'memory' };
  await ok('/v1/createQueue', { repo, targetBranch: 'main', concurrency: 2 });
  logReads = 0;
  const numbers = Array.from({ length: 10 }, (_, i) => i + 1);
  for (const n of numbers) await ok('/sandbox/updatePullRequest', { repo, pr: { number: n }, ciSeconds: 1 });
  await Promise.all(numbers.map((n) => ok('/v1/submitPullRequest', { repo, targetBranch: 'main', pr: { number: n } })));
  for (const n of numbers) await waitFor(() => ok('/v1/getSubmittedPullRequest', { repo, targetBranch: 'main', pr: { number: n } }), (pr) => pr.state === 'MERGED', 20_000);
  const queue = await ok('/v1/getQueue', { repo, targetBranch: 'main' });
  await h.runner!.settled(queue.id as string);
  const sandbox = await ok('/sandbox/getRepository', { repo });
  for (const n of numbers) {
    expect(sandbox.pullRequests[String(n)].merged).toBe(true);
    expect(sandbox.pullRequests[String(n)].queueStatus.state).toBe('MERGED');
  }
  expect(logReads).toBe(0);
  // Loaded once, as its writer: its entries' copies forgotten first.
  expect(forgotten).toEqual([queue.id]);
});
