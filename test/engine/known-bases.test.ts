/**
 * The branch heads the queue produced are remembered as "root + the heads landed on it" so a run built before a
 * landing still describes the same content after it. Those lists must not grow with every landing of the queue's
 * life (each validity check and snapshot paid for it), and folding what every base in use shares must not change
 * which runs stay valid.
 */
import type { EngineAction, EngineRun } from '../../src/engine/model.js';
import { facts, queueDriver } from './support/queue-driver.js';

type Driver = ReturnType<typeof queueDriver>;

const longestKnownBase = (q: Driver) => Math.max(0, ...Object.values(q.state.knownBases).map((b) => b.heads.length));
const longestRoot = (q: Driver) => Math.max(0, ...Object.values(q.state.knownBases).map((b) => b.root.length));
const runHolding = (q: Driver, entryId: string) => q.state.runs.find((r) => r.unit.some((h) => h.entryId === entryId)) as EngineRun;
const merges = (actions: EngineAction[]) => actions.flatMap((a) => (a.type === 'merge' ? [a] : []));

/** Passes the run holding the PR and lands it at a new branch head; returns that head. */
function land(q: Driver, entryId: string, at: number): string {
  const run = runHolding(q, entryId);
  const passed = q.send({ type: 'run_finished', runId: run.id, passed: true }, at);
  const [merge] = merges(passed.actions);
  expect(merge?.runId).toBe(run.id);
  const newBaseSha = `landed-${entryId}`;
  q.send({ type: 'merge_finished', runId: run.id, ok: true, newBaseSha }, at);
  return newBaseSha;
}

/** Submitted at n ms: the queue's order is the order of submission. */
function submitWith(q: Driver, n: number, targets: string[], at = n) {
  q.send({ type: 'submitted', entryId: `e${n}`, prNumber: n, priority: 100, noBatch: false, facts: facts(`h${n}`), targets: { sha: `h${n}`, targets } }, at);
}

test.each(['single', 'parallel'] as const)('a %s queue landing 120 PRs one after another keeps its known bases short', (mode) => {
  const q = queueDriver({ mode, concurrency: 2, batch: false });
  for (let n = 1; n <= 120; n++) submitWith(q, n, ['//api']);
  for (let n = 1; n <= 120; n++) land(q, `e${n}`, 1000 + n);
  expect(q.state.entries).toHaveLength(0);
  // Without the fold the branch's known base lists all 120 landings; folded again and again, the root stays short.
  expect(longestKnownBase(q)).toBeLessThanOrEqual(2);
  expect(longestRoot(q)).toBeLessThan(40);
});

test('a parallel lane\'s run outlives landings of another lane, stays valid, and lands untested again', () => {
  const q = queueDriver({ mode: 'parallel', concurrency: 2, batch: false });
  submitWith(q, 1, ['//web']);
  for (let n = 2; n <= 30; n++) submitWith(q, n, ['//api']);
  const web = runHolding(q, 'e1');
  for (let n = 2; n <= 30; n++) land(q, `e${n}`, 1000 + n);
  // The web run was never dropped or rebuilt: the same run is there, still built on the first head.
  expect(runHolding(q, 'e1')).toMatchObject({ id: web.id, baseSha: web.baseSha, status: 'running' });
  expect(q.log.filter((a) => a.type === 'start_run' && a.run.unit.some((h) => h.entryId === 'e1'))).toHaveLength(1);
  land(q, 'e1', 1040);
  expect(q.state.entries).toHaveLength(0);
  // It pinned the first head while the other lane landed (nothing shared to fold); once it landed the lists fold.
  submitWith(q, 31, ['//api'], 1041);
  land(q, 'e31', 1042);
  expect(longestKnownBase(q)).toBeLessThanOrEqual(2);
});

test('a single queue\'s runs built on earlier heads stay valid across folds and land in order', () => {
  const q = queueDriver({ mode: 'single', concurrency: 3, batch: false });
  for (let n = 1; n <= 40; n++) submitWith(q, n, ['//api']);
  const startedBefore = q.log.filter((a) => a.type === 'start_run').length;
  // Each landing keeps the two runs behind it (built on heads before it) valid: no rebuild, one new run a landing.
  for (let n = 1; n <= 37; n++) land(q, `e${n}`, 1000 + n);
  const started = q.log.filter((a) => a.type === 'start_run').length - startedBefore;
  expect(started).toBe(37);
  expect(q.log.some((a) => a.type === 'cancel_run')).toBe(false);
  expect(longestKnownBase(q)).toBeLessThanOrEqual(3);
});
