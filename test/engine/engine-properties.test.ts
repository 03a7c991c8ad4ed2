/**
 * Property tests of the pure engine over random event sequences: arrivals,
 * breaking and flaky PRs, pushes, cancels, priority and config changes, pauses,
 * base moves and restarts of the runner (the state goes through JSON). A small
 * model of the world executes the engine's actions and checks what must hold.
 */
import fc from 'fast-check';
import { notReadyReason } from '../../src/engine/admission.js';
import { decide } from '../../src/engine/decide.js';
import { command, World, worldInitialState } from './support/engine-world.js';

const commands = fc.array(command, { minLength: 5, maxLength: 80 });
/** More runs for a deeper search: MQ_PROPERTY_RUNS=5000 npm run test:unit -- test/engine */
const scale = Number(process.env.MQ_PROPERTY_RUNS ?? 300) / 300;

test('safety: only tested content merges, never twice, never after cancel, never a broken PR; concurrency and order hold', () => {
  fc.assert(
    fc.property(commands, (cmds) => {
      const world = new World();
      for (const c of cmds) world.apply(c);
      world.drain();
    }),
    { numRuns: Math.round(300 * scale) },
  );
});

test('safety and liveness hold when submits that arrive together are decided together (as the runner decides them)', () => {
  let grouped = 0;
  fc.assert(
    fc.property(commands, (cmds) => {
      const world = new World({ together: true });
      for (const c of cmds) world.apply(c);
      world.drain();
      grouped += world.decisions.length < world.events.length ? 1 : 0;
      for (const entry of world.state.entries) expect(entry.state).toBe('NOT_READY');
    }),
    { numRuns: Math.round(300 * scale) },
  );
  // The sequences did decide submits together (else this test would repeat the one above).
  expect(grouped).toBeGreaterThan(0);
});

test('liveness: every submitted PR ends terminal, or waits in NOT_READY for a reason the API states', () => {
  fc.assert(
    fc.property(commands, (cmds) => {
      const world = new World();
      for (const c of cmds) world.apply(c);
      world.drain();
      for (const entry of world.state.entries) {
        expect(entry.state).toBe('NOT_READY');
        const { targetBranch, config } = world.state;
        expect(notReadyReason({ targetBranch, mode: config.mode, facts: entry.facts, targetsSha: entry.targets?.sha ?? null })).not.toBeNull();
      }
    }),
    { numRuns: Math.round(200 * scale) },
  );
});

test('replay determinism: the same events give the same decisions', () => {
  fc.assert(
    fc.property(commands, (cmds) => {
      const world = new World();
      for (const c of cmds) world.apply(c);
      let state = worldInitialState();
      world.events.forEach(({ event, now }, i) => {
        const replayed = decide(state, event, now);
        expect(replayed.actions).toEqual(world.decisions[i]);
        state = replayed.state;
      });
    }),
    { numRuns: Math.round(100 * scale) },
  );
});

test('the random sequences reach risks the queue derives from authors, so the properties above cover them', () => {
  // Submitted without a hint, yet a risk: derived from the author's record (some likely to break).
  const derived: number[] = [];
  for (const cmds of fc.sample(commands, { numRuns: 100, seed: 12 })) {
    const world = new World();
    for (const c of cmds) {
      world.apply(c);
      const hinted = new Set(world.events.flatMap(({ event }) => (event.type === 'submitted' && event.risk !== undefined ? [event.entryId] : [])));
      derived.push(...world.state.entries.filter((e) => e.risk !== undefined && !hinted.has(e.id)).map((e) => e.risk as number));
    }
  }
  expect(derived.filter((r) => r < 0.5).length).toBeGreaterThan(0);
  expect(derived.filter((r) => r >= 0.5).length).toBeGreaterThan(0);
});
