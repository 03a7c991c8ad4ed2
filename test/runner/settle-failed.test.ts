/**
 * Inputs decided together that the engine cannot settle name no input to blame (SettleFailed): the writer
 * reloads and decides them one by one, which names the input that cannot be decided. That one is set aside; the
 * others are decided as if it had never come, and the rounds after decide together again.
 */
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { gitHostRegistry } from '../../src/ports/git-host.js';
import { QueueRunner } from '../../src/runner/queue-runner.js';
import { claimEntry, insertQueue, prFacts, quietHost, useRunnerDatabase } from './support/runner-fixture.js';

const db = useRunnerDatabase('settle_failed');

test('a round the engine cannot settle is decided one by one: the input to blame is set aside, the others decided', async () => {
  const { stores } = db;
  const queue = await insertQueue(stores, 'settle', { config: { ...DEFAULT_QUEUE_CONFIG, requiredStatuses: ['ci'], mode: 'parallel', concurrency: 4 } });
  const logged: string[] = [];
  const log = { info() {}, warn() {}, error: (_fields: unknown, message: string) => void logged.push(message) };
  const runner = new QueueRunner({ stores, hosts: gitHostRegistry({ 'fake.example': quietHost() }), log, owner: 'A', pollMs: 60_000 });
  const targets = (n: number, list: unknown) => ({ sha: prFacts(n).headSha, targets: list as string[] });
  await runner.dispatch(queue.id, { type: 'base_moved', sha: 'base0' });
  const first = await claimEntry(stores, queue.id, 1);
  expect(await runner.dispatch(queue.id, { ...first.submitted, targets: targets(1, ['api']) })).toBe(true);
  await runner.settled(queue.id);
  // In one round: a PR whose targets the engine can apply but not compare (a number, not a list), and a good one.
  const bad = await claimEntry(stores, queue.id, 2);
  const good = await claimEntry(stores, queue.id, 3);
  const round = [
    runner.dispatch(queue.id, { ...bad.submitted, targets: targets(2, 5) }),
    runner.dispatch(queue.id, { ...good.submitted, targets: targets(3, ['web']) }),
  ];
  // Not decided by that round (left to the inbox, decided by the next ones).
  expect(await Promise.all(round)).toEqual([false, false]);
  await runner.settled(queue.id);
  expect(logged).toEqual(['the engine could not settle inputs decided together; deciding them one by one', 'the engine could not apply an input; it was set aside']);
  expect(await stores.engine.pending(queue.id, 10)).toEqual([]);
  // The good PR is in the queue; the bad one was never taken in (its claim answers it as just submitted).
  expect((await stores.entries.findById(good.entryId))?.state).toMatch(/^(PENDING|TESTING)$/);
  expect(await stores.entries.findById(bad.entryId)).toBeNull();
  expect((await stores.entries.find(queue.id, 2))?.state).toBe('NOT_READY');
  const state = await runner.engineState(queue.id);
  expect(state?.entries.map((e) => e.prNumber).sort()).toEqual([1, 3]);
  // Decided together again: the next round's inputs are one decision.
  const later = [await claimEntry(stores, queue.id, 4), await claimEntry(stores, queue.id, 5)];
  const before = (await stores.engine.load(queue.id))?.decisions.at(-1)?.version ?? 0;
  const decided = await Promise.all(later.map((c, i) => runner.dispatch(queue.id, { ...c.submitted, targets: targets(4 + i, ['docs']) })));
  expect(decided).toEqual([true, true]);
  const after = (await stores.engine.load(queue.id))?.decisions.filter((d) => d.version > before) ?? [];
  expect(after.find((d) => d.items.length === 2)?.together).toBe(true);
  await runner.stop();
});
