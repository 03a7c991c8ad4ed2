/**
 * Entries keep the host's facts and the timeline as JSON text (cheaper to read
 * on the local FerretDB); entries stored before as nested objects are read the
 * same, and the next write of the runner converts them.
 */
import { ObjectId } from 'mongodb';
import { openMongoStores } from '../../src/adapters/mongo/mongo-stores.js';
import { DEFAULT_QUEUE_CONFIG } from '../../src/domain/queue-config.js';
import { submission, useRunnerDatabaseWithDriver } from './support/runner-fixture.js';

const db = useRunnerDatabaseWithDriver('entry_storage');

const facts = { title: 'Old', author: 'dev', headSha: 'abc123', baseBranch: 'main', open: true, draft: false, merged: false, mergeability: 'mergeable' as const, readAt: new Date('2026-01-01T00:00:00Z') };

test('a new entry round-trips its facts and timeline, dates included', async () => {
  const queueId = new ObjectId().toHexString();
  const at = new Date('2026-02-02T10:00:00Z');
  const inserted = await db.stores.entries.insert({ queueId, prNumber: 1, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  if (!inserted.ok) throw new Error('not inserted');
  const read = await db.stores.entries.find(queueId, 1);
  expect(read?.facts).toEqual(facts);
  expect(read?.timeline).toEqual([{ at, state: 'NOT_READY', reason: 'submitted' }]);
  const raw = await db.raw.collection('queue_entries').findOne({ _id: new ObjectId(inserted.value.id) });
  expect(typeof raw?.factsJson).toBe('string');
  expect(raw?.timeline).toBeUndefined();
});

test('an entry stored with nested facts and timeline is read the same, and converted by the next write', async () => {
  const queueId = new ObjectId();
  const _id = new ObjectId();
  const at = new Date('2026-03-03T10:00:00Z');
  await db.raw.collection('queue_entries').insertOne({ _id, queueId, prNumber: 7, attempt: 1, state: 'PENDING', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }, { at, state: 'PENDING', reason: 'ready' }] });
  await db.raw.collection('queue_entry_keys').insertOne({ _id: `${queueId.toHexString()}:7` as unknown as ObjectId, queueId, entryId: _id });
  const read = await db.stores.entries.find(queueId.toHexString(), 7);
  expect(read?.facts).toEqual(facts);
  expect(read?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING']);

  const later = new Date('2026-03-03T11:00:00Z');
  await db.stores.entries.recordTransition(_id.toHexString(), { at: later, state: 'TESTING', reason: 'test_started' }, 100_000);
  const converted = await db.stores.entries.findById(_id.toHexString());
  expect(converted?.state).toBe('TESTING');
  expect(converted?.timeline.map((e) => [e.state, e.at.toISOString()])).toEqual([
    ['NOT_READY', at.toISOString()],
    ['PENDING', at.toISOString()],
    ['TESTING', later.toISOString()],
  ]);
  const raw = await db.raw.collection('queue_entries').findOne({ _id });
  expect(raw?.timeline).toBeUndefined();
  expect(typeof raw?.timelineJson).toBe('string');
  // A replay of the same write (same key) changes nothing.
  await db.stores.entries.recordTransition(_id.toHexString(), { at: new Date(), state: 'PENDING', reason: 'rebuilt' }, 100_000);
  expect((await db.stores.entries.findById(_id.toHexString()))?.timeline).toHaveLength(3);
});

test('a PR is found by one read of its entry once its key is known; an entry gone (its queue deleted) is not served from memory', async () => {
  const repo = { host: 'sandbox', owner: 'keys', name: 'remembered' };
  const queue = await db.stores.queues.insert({ repo, targetBranch: 'main', config: { ...DEFAULT_QUEUE_CONFIG }, requestedState: 'RUNNING', modeSwitchStartedAt: null, createdAt: new Date(), updatedAt: new Date() });
  if (!queue.ok) throw new Error('queue not inserted');
  const at = new Date();
  await db.stores.entries.insert({ queueId: queue.value.id, prNumber: 7, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  expect((await db.stores.entries.find(queue.value.id, 7))?.prNumber).toBe(7);
  // The key is remembered: even with the key document gone, the entry is found (by its id).
  await db.raw.collection('queue_entry_keys').deleteOne({ _id: `${queue.value.id}:7` as never });
  expect((await db.stores.entries.find(queue.value.id, 7))?.prNumber).toBe(7);
  // The queue deleted: its entries go, and the remembered key does not bring one back.
  await db.stores.queues.delete(queue.value.id);
  expect(await db.stores.entries.find(queue.value.id, 7)).toBeNull();
});

test('concurrent inserts (grouped into few writes) each get their own outcome: one entry per PR, the others told it is a duplicate', async () => {
  const queueId = new ObjectId().toHexString();
  const at = new Date('2026-04-04T10:00:00Z');
  const insert = (prNumber: number) =>
    db.stores.entries.insert({ queueId, prNumber, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  // 40 PRs, every fourth submitted twice at once: the two race for the same key inside one group.
  const numbers = Array.from({ length: 40 }, (_, i) => i + 1);
  const outcomes = await Promise.all([...numbers, ...numbers.filter((n) => n % 4 === 0)].map(async (n) => ({ n, outcome: await insert(n) })));
  for (const n of numbers) {
    const mine = outcomes.filter((o) => o.n === n);
    expect(mine.filter((o) => o.outcome.ok)).toHaveLength(1);
    expect(mine.filter((o) => !o.outcome.ok).map((o) => !o.outcome.ok && o.outcome.reason)).toEqual(n % 4 === 0 ? ['duplicate'] : []);
    const stored = await db.stores.entries.find(queueId, n);
    const won = mine.find((o) => o.outcome.ok)?.outcome;
    expect(stored?.id).toBe(won?.ok ? won.value.id : undefined);
  }
  expect(await db.raw.collection('queue_entries').countDocuments({ queueId: new ObjectId(queueId) })).toBe(40);
});

test('lastWritten: the entry as this process last wrote it whole, equal to what a read gives; forgotten by a write made without a read', async () => {
  const queueId = new ObjectId().toHexString();
  const at = new Date('2026-05-05T10:00:00Z');
  const inserted = await db.stores.entries.insert({ queueId, prNumber: 3, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
  if (!inserted.ok) throw new Error('not inserted');
  const id = inserted.value.id;
  expect(db.stores.entries.lastWritten(id)).toEqual(await db.stores.entries.findById(id));
  const later = new Date('2026-05-05T10:01:00Z');
  await db.stores.entries.recordTransition(id, { at: later, state: 'PENDING', reason: 'ready' }, 100_000);
  const read = await db.stores.entries.findById(id);
  expect(read?.state).toBe('PENDING');
  expect(db.stores.entries.lastWritten(id)).toEqual(read);
  await db.stores.entries.setFacts(id, { ...facts, headSha: 'def456' });
  expect(db.stores.entries.lastWritten(id)).toBeNull();
  expect(db.stores.entries.lastWritten(new ObjectId().toHexString())).toBeNull();
});

test('recordTransitions: several entries in one write, one entry\'s changes in order, each checked as recordTransition checks it', async () => {
  const queueId = new ObjectId().toHexString();
  const at = new Date('2026-06-06T10:00:00Z');
  const ids: string[] = [];
  for (const prNumber of [1, 2, 3]) {
    const inserted = await db.stores.entries.insert({ queueId, prNumber, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
    if (!inserted.ok) throw new Error('not inserted');
    ids.push(inserted.value.id);
  }
  const [a, b, c] = ids as [string, string, string];
  const t = (minutes: number) => new Date(at.getTime() + minutes * 60_000);
  await db.stores.entries.recordTransitions([
    { entryId: a, event: { at: t(1), state: 'PENDING', reason: 'ready' }, key: 100_000 },
    { entryId: b, event: { at: t(1), state: 'PENDING', reason: 'ready' }, key: 100_001 },
    { entryId: a, event: { at: t(2), state: 'TESTING', reason: 'test_started' }, key: 100_002 },
    // The same state again: nothing to record.
    { entryId: b, event: { at: t(2), state: 'PENDING', reason: 'ready' }, key: 100_003 },
    { entryId: c, event: { at: t(3), state: 'CANCELLED', reason: 'user_requested' }, key: 100_004 },
    // An ended attempt changes only through a resubmission.
    { entryId: c, event: { at: t(4), state: 'PENDING', reason: 'ready' }, key: 100_005 },
  ]);
  const read = async (id: string) => (await db.stores.entries.findById(id))!;
  expect((await read(a)).timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  expect((await read(a)).stateChangedAt).toEqual(t(2));
  expect((await read(b)).timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING']);
  expect((await read(c)).state).toBe('CANCELLED');
  expect((await read(c)).concludedAt).toEqual(t(3));
  // What this process remembers is what a read gives.
  for (const id of ids) expect(db.stores.entries.lastWritten(id)).toEqual(await read(id));
  // A replay of the decision (same keys) changes nothing.
  await db.stores.entries.recordTransitions([{ entryId: a, event: { at: t(5), state: 'PENDING', reason: 'rebuilt' }, key: 100_000 }]);
  expect((await read(a)).timeline).toHaveLength(3);
});

test('forgetWritten: a writer that comes back after another replica wrote its entries extends what that replica wrote, not its own old copy', async () => {
  const other = await openMongoStores({ uri: db.uri });
  try {
    const queueId = new ObjectId().toHexString();
    const at = new Date('2026-07-07T10:00:00Z');
    const inserted = await db.stores.entries.insert({ queueId, prNumber: 9, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
    if (!inserted.ok) throw new Error('not inserted');
    const id = inserted.value.id;
    // Another replica's runner, the queue's writer for a while, records a change.
    await other.entries.recordTransition(id, { at: new Date('2026-07-07T10:01:00Z'), state: 'PENDING', reason: 'ready' }, 100_000);
    // This replica becomes the writer again: its copy from the insert is forgotten, so its next change reads first.
    db.stores.entries.forgetWritten(queueId);
    await db.stores.entries.recordTransition(id, { at: new Date('2026-07-07T10:02:00Z'), state: 'TESTING', reason: 'test_started' }, 200_000);
    expect((await db.stores.entries.findById(id))?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING', 'TESTING']);
  } finally {
    await other.close();
  }
});

test('an entry whose key was never written (its writer died between the two) is found again by the next submit of the PR', async () => {
  const queueId = new ObjectId();
  const _id = new ObjectId();
  const at = new Date('2026-08-08T10:00:00Z');
  await db.raw.collection('queue_entries').insertOne({ _id, queueId, prNumber: 4, attempt: 1, state: 'PENDING', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, factsJson: null, timelineJson: '[]', recordedKey: 0 });
  expect(await db.stores.entries.find(queueId.toHexString(), 4)).toBeNull();
  const again = await db.stores.entries.insert({ queueId: queueId.toHexString(), prNumber: 4, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [] });
  expect(again).toEqual({ ok: false, reason: 'duplicate' });
  expect((await db.stores.entries.find(queueId.toHexString(), 4))?.id).toBe(_id.toHexString());
});

test('a key left naming an entry that was never written (stored before entries came first) is taken over by the new entry', async () => {
  const queueId = new ObjectId();
  await db.raw.collection('queue_entry_keys').insertOne({ _id: `${queueId.toHexString()}:6` as unknown as ObjectId, queueId, entryId: new ObjectId() });
  const at = new Date('2026-09-09T10:00:00Z');
  const inserted = await db.stores.entries.insert({ queueId: queueId.toHexString(), prNumber: 6, attempt: 1, state: 'NOT_READY', priority: 100, noBatch: false, submittedAt: at, stateChangedAt: at, concludedAt: null, facts: null, timeline: [] });
  if (!inserted.ok) throw new Error('not inserted');
  await inserted.findable;
  expect((await db.stores.entries.find(queueId.toHexString(), 6))?.id).toBe(inserted.value.id);
});

describe('claims: a submission is its key until the runner writes its entry', () => {
  const submitted = (queueId: string, prNumber: number, at: Date) => submission(queueId, prNumber, at, facts);
  const entriesOf = (queueId: string) => db.raw.collection('queue_entries').countDocuments({ queueId: new ObjectId(queueId) });

  test('found as submitted before its decision; written whole with its first changes by the decision, once; a second claim is a duplicate', async () => {
    const queueId = new ObjectId().toHexString();
    const at = new Date('2026-10-10T10:00:00Z');
    const claimed = await db.stores.entries.claim(submitted(queueId, 1, at));
    if (!claimed.ok) throw new Error('not claimed');
    expect(await entriesOf(queueId)).toBe(0);
    expect(await db.stores.entries.findById(claimed.value.id)).toBeNull();
    const found = await db.stores.entries.find(queueId, 1);
    expect(found).toMatchObject({ id: claimed.value.id, state: 'NOT_READY', facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
    expect(await db.stores.entries.claim(submitted(queueId, 1, at))).toEqual({ ok: false, reason: 'duplicate' });

    const queuedAt = new Date('2026-10-10T10:00:01Z');
    const first = { entryId: claimed.value.id, queueId, prNumber: 1 };
    await db.stores.entries.recordTransitions([{ entryId: claimed.value.id, event: { at: queuedAt, state: 'PENDING', reason: 'ready' }, key: 100_000 }], [first]);
    const written = await db.stores.entries.findById(claimed.value.id);
    expect(written).toMatchObject({ state: 'PENDING', stateChangedAt: queuedAt, submittedAt: at, facts, recordedKey: 100_000 });
    expect(written?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'PENDING']);
    expect(db.stores.entries.lastWritten(claimed.value.id)).toEqual(written);
    expect(await db.stores.entries.find(queueId, 1)).toEqual(written);
    // The decision recorded again (a replay after a crash): nothing changes, nothing is written twice.
    await db.stores.entries.recordTransitions([{ entryId: claimed.value.id, event: { at: new Date(), state: 'PENDING', reason: 'ready' }, key: 100_000 }], [first]);
    expect(await entriesOf(queueId)).toBe(1);
    expect(await db.stores.entries.findById(claimed.value.id)).toEqual(written);
  });

  test('claimed on another replica: this runner writes the entry from the key, also when the decision leaves it NOT_READY', async () => {
    const other = await openMongoStores({ uri: db.uri });
    try {
      const queueId = new ObjectId().toHexString();
      const at = new Date('2026-10-11T10:00:00Z');
      const claimed = await other.entries.claim(submitted(queueId, 2, at));
      if (!claimed.ok) throw new Error('not claimed');
      await db.stores.entries.recordTransitions([], [{ entryId: claimed.value.id, queueId, prNumber: 2 }]);
      const written = await db.stores.entries.findById(claimed.value.id);
      expect(written).toMatchObject({ state: 'NOT_READY', submittedAt: at, facts, timeline: [{ at, state: 'NOT_READY', reason: 'submitted' }] });
      // The claiming replica's runner, the writer again later, finds it written: it adds its change, nothing more.
      other.entries.forgetWritten(queueId);
      await other.entries.recordTransitions([{ entryId: claimed.value.id, event: { at, state: 'CANCELLED', reason: 'user_requested' }, key: 200_000 }], [{ entryId: claimed.value.id, queueId, prNumber: 2 }]);
      expect(await entriesOf(queueId)).toBe(1);
      expect((await db.stores.entries.findById(claimed.value.id))?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'CANCELLED']);
    } finally {
      await other.close();
    }
  });

  test('a decision naming an entry nobody claimed writes nothing; a key naming no entry and holding no submission is taken over', async () => {
    const queueId = new ObjectId();
    await db.stores.entries.recordTransitions([], [{ entryId: new ObjectId().toHexString(), queueId: queueId.toHexString(), prNumber: 3 }]);
    expect(await entriesOf(queueId.toHexString())).toBe(0);
    await db.raw.collection('queue_entry_keys').insertOne({ _id: `${queueId.toHexString()}:3` as unknown as ObjectId, queueId, entryId: new ObjectId() });
    const claimed = await db.stores.entries.claim(submitted(queueId.toHexString(), 3, new Date('2026-10-12T10:00:00Z')));
    if (!claimed.ok) throw new Error('not taken over');
    expect((await db.stores.entries.find(queueId.toHexString(), 3))?.id).toBe(claimed.value.id);
  });
});

test('a state change naming its PR, to an entry never written (decided by a writer of an older release), writes it from its claim', async () => {
  const queueId = new ObjectId().toHexString();
  const at = new Date('2026-10-13T10:00:00Z');
  const other = await openMongoStores({ uri: db.uri });
  try {
    // Claimed on another replica; the decision that took it in wrote nothing (its writer did not know claims).
    const claimed = await other.entries.claim(submission(queueId, 5, at, facts));
    if (!claimed.ok) throw new Error('not claimed');
    const testing = new Date('2026-10-13T10:05:00Z');
    // Without the PR named, a change to an entry never written writes nothing (as before claims).
    await db.stores.entries.recordTransitions([{ entryId: claimed.value.id, event: { at: testing, state: 'TESTING', reason: 'test_started' }, key: 300_000 }]);
    expect(await db.stores.entries.findById(claimed.value.id)).toBeNull();
    await db.stores.entries.recordTransitions([{ entryId: claimed.value.id, event: { at: testing, state: 'TESTING', reason: 'test_started' }, key: 300_000, claim: { queueId, prNumber: 5 } }]);
    const written = await db.stores.entries.findById(claimed.value.id);
    expect(written?.timeline.map((e) => e.state)).toEqual(['NOT_READY', 'TESTING']);
    expect(written).toMatchObject({ state: 'TESTING', submittedAt: at, facts });
  } finally {
    await other.close();
  }
});
