import { LRUCache } from 'lru-cache';
import { Types, type Connection } from 'mongoose';
import { DEFAULT_PRIORITY, isPriority } from '../../domain/priority.js';
import { ENQUEUED_STATES, isTerminal, type PullRequestState } from '../../domain/pull-request-state.js';
import type { PullRequestFacts, QueueEntryRecord, TimelineEvent } from '../../domain/records.js';
import type { QueueEntryStore } from '../../ports/stores.js';
import { isDuplicateKeyError } from './errors.js';
import { GroupedWrites } from './grouped-writes.js';
import { queueEntryKeyModel, queueEntryModel } from './models/queue-entry.js';
import { parseObjectId } from './object-id.js';

/**
 * An entry as stored. The host's facts and the timeline are JSON text in the
 * entry (`factsJson`, `timelineJson`): nothing queries inside them, and the
 * local FerretDB reads a document of a few scalar fields about 2.6 times
 * faster than one of nested objects (182 vs 68 ms per 1,000 entries), which
 * whole-queue views pay per entry. Entries written before keep `facts` and
 * `timeline` as objects and are read either way; the next write converts them.
 */
type Doc = Omit<QueueEntryRecord, 'id' | 'queueId' | 'facts' | 'timeline'> & {
  _id: Types.ObjectId;
  queueId: Types.ObjectId;
  factsJson?: string | null;
  timelineJson?: string | null;
  facts?: PullRequestFacts | null;
  timeline?: TimelineEvent[];
};

function factsOf(doc: Pick<Doc, 'factsJson' | 'facts'>): PullRequestFacts | null {
  if (doc.factsJson) {
    const facts = JSON.parse(doc.factsJson) as PullRequestFacts & { readAt: string };
    return { ...facts, readAt: new Date(facts.readAt) };
  }
  return doc.facts ?? null;
}

function timelineOf(doc: Pick<Doc, 'timelineJson' | 'timeline'>): TimelineEvent[] {
  if (doc.timelineJson) return (JSON.parse(doc.timelineJson) as Array<TimelineEvent & { at: string }>).map((e) => ({ ...e, at: new Date(e.at) }));
  return (doc.timeline ?? []).map((e) => ({ ...e }));
}

/** The stored form of facts and timeline (and the old nested fields removed). */
function flat(change: { facts?: PullRequestFacts | null; timeline?: TimelineEvent[] }): { $set: Record<string, unknown>; $unset: Record<string, ''> } {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  if (change.facts !== undefined) {
    $set.factsJson = change.facts ? JSON.stringify(change.facts) : null;
    $unset.facts = '';
  }
  if (change.timeline !== undefined) {
    $set.timelineJson = JSON.stringify(change.timeline);
    $unset.timeline = '';
  }
  return { $set, $unset };
}

function toRecord(doc: Doc): QueueEntryRecord {
  return {
    id: doc._id.toHexString(),
    queueId: doc.queueId.toHexString(),
    prNumber: doc.prNumber,
    attempt: doc.attempt,
    state: doc.state,
    // An entry stored before every way in checked priorities may lack one (a comment's `--priority=constructor`
    // stored a function, which BSON dropped): read as the default, so no view of the queue fails on it.
    priority: isPriority(doc.priority) ? doc.priority : DEFAULT_PRIORITY,
    noBatch: doc.noBatch,
    submittedAt: doc.submittedAt,
    stateChangedAt: doc.stateChangedAt,
    concludedAt: doc.concludedAt ?? null,
    facts: factsOf(doc),
    timeline: timelineOf(doc),
    recordedKey: doc.recordedKey ?? 0,
  };
}

function queueObjectId(queueId: string): Types.ObjectId {
  const id = parseObjectId(queueId);
  if (!id) throw new Error(`not a queue id: ${queueId}`);
  return id;
}

/** An entry's first record, as its submit's key holds it until the runner writes the entry (dates as BSON dates). */
type PendingDoc = Omit<Doc, '_id' | 'queueId'>;
type KeyDoc = { _id: string; entryId: Types.ObjectId; pending?: PendingDoc | null };
const keyFor = (queueId: string, prNumber: number) => `${queueId}:${prNumber}`;

/** A new entry's fields as stored, but for its ids. */
function firstRecord(entry: Omit<QueueEntryRecord, 'id'>): PendingDoc {
  const { facts, timeline, queueId: _queueId, ...fields } = entry;
  return { ...fields, recordedKey: 0, ...flat({ facts, timeline }).$set } as PendingDoc;
}

/** The document a new entry is written as. */
function entryDoc(entry: Omit<QueueEntryRecord, 'id'>, _id: Types.ObjectId, queueId: Types.ObjectId): Doc {
  return { ...firstRecord(entry), _id, queueId };
}

/** The entry a key's pending submission stands for (written by the runner when it decides it). */
function pendingEntry(key: KeyDoc & { queueId: Types.ObjectId }): Doc | null {
  return key.pending ? { ...key.pending, _id: key.entryId, queueId: key.queueId } : null;
}

/** Entries written before the key collection existed get their keys (once; later starts find nothing to do). */
export async function ensureEntryKeys(connection: Connection): Promise<number> {
  const Entries = queueEntryModel(connection);
  const Keys = queueEntryKeyModel(connection);
  // Keys can outnumber entries (a submission's key before its entry is written), never the other way round once
  // every entry has its key.
  if ((await Entries.estimatedDocumentCount()) <= (await Keys.estimatedDocumentCount())) return 0;
  const have = new Set((await Keys.find({}, { _id: 1 }).lean<{ _id: string }[]>()).map((k) => k._id));
  let added = 0;
  for (const entry of await Entries.find({}, { _id: 1, queueId: 1, prNumber: 1 }).lean<{ _id: Types.ObjectId; queueId: Types.ObjectId; prNumber: number }[]>()) {
    const _id = keyFor(entry.queueId.toHexString(), entry.prNumber);
    if (have.has(_id)) continue;
    await Keys.create({ _id, queueId: entry.queueId, entryId: entry._id }).catch((error: unknown) => {
      if (!isDuplicateKeyError(error)) throw error;
    });
    added++;
  }
  return added;
}

/** Keys remembered per process: enough for the PRs any replica reads in a busy hour. */
const REMEMBERED_KEYS = 100_000;

export function mongoQueueEntryStore(connection: Connection): QueueEntryStore {
  /**
   * A PR's key names its entry for good (a new attempt reuses the entry; a queue
   * deleted and made again has a new id), so the key is read once per process:
   * a PR read costs one read by id, not two. An entry found missing (its queue
   * deleted) is looked up afresh.
   */
  const entryIds = new LRUCache<string, Types.ObjectId>({ max: REMEMBERED_KEYS });
  const Entries = queueEntryModel(connection);
  const Keys = queueEntryKeyModel(connection);
  const inStates = (states: readonly PullRequestState[]) => ({ $in: [...states] });
  // Entries written before keys existed have none: any key is newer.
  const isNewer = (recorded: number | null | undefined, key: number) => (recorded ?? -1) < key;
  /**
   * Entries as this process last wrote them whole (inserted, or a state the runner recorded). The runner is the
   * only writer of state, timeline and key, so while this process's runner stays the queue's writer these copies
   * are current: its writes extend them without reading the entry first. Forgotten when the runner becomes a
   * queue's writer (`forgetWritten`): another replica's runner may have written the entries meanwhile.
   */
  const written = new LRUCache<string, Doc>({ max: 5000, ttl: 60_000 });
  /**
   * Entries this process's requests claimed (`claim`) and its runner has not written yet: the runner writes them
   * from these copies without reading their keys. Lost with the process: the key holds the same.
   */
  const claimed = new LRUCache<string, Doc>({ max: 5000, ttl: 10 * 60_000 });
  /** What a keyed write checks and extends: the state, the last key, the timeline (this process's copy, else read). */
  const stored = async (entryId: string) => {
    const known = written.get(entryId);
    if (known) return known;
    const _id = parseObjectId(entryId);
    return _id ? Entries.findById(_id).lean<Doc>() : null;
  };
  /** The entry with a change applied, as this process now knows it. */
  const applied = (current: Doc, $set: Record<string, unknown>, $unset: Record<string, ''>): Doc => {
    const after: Record<string, unknown> = { ...current, ...$set };
    for (const field of Object.keys($unset)) delete after[field];
    return after as Doc;
  };
  /** Writes a runner's change (checked, whole new fields) and remembers the entry as written. */
  const writeChange = async (current: Doc, $set: Record<string, unknown>, $unset: Record<string, ''>) => {
    await Entries.updateOne({ _id: current._id }, { $set, $unset });
    written.set(current._id.toHexString(), applied(current, $set, $unset));
  };
  /** A state change applied to an entry, or null when it changes nothing (a replay, the same state, an ended attempt). */
  const transitioned = (current: Doc, event: TimelineEvent, key: number) => {
    // An ended attempt changes only through a resubmission (a cancel racing a merge loses).
    if (!isNewer(current.recordedKey, key) || current.state === event.state || isTerminal(current.state)) return null;
    const { $set, $unset } = flat({ timeline: [...timelineOf(current), event] });
    return { $set: { ...$set, state: event.state, stateChangedAt: event.at, concludedAt: isTerminal(event.state) ? event.at : null, recordedKey: key }, $unset };
  };

  type Chain = Array<{ event: TimelineEvent; key: number }>;
  /** An entry with a chain of state changes applied (after `set`, fields its submission decided), and what changed. */
  const extended = (before: Doc, chain: Chain, set: { priority?: number; noBatch?: boolean } = {}) => {
    let $set: Record<string, unknown> = {};
    for (const field of ['priority', 'noBatch'] as const) if (set[field] !== undefined && set[field] !== before[field]) $set[field] = set[field];
    let current = Object.keys($set).length > 0 ? applied(before, $set, {}) : before;
    let $unset: Record<string, ''> = {};
    for (const { event, key } of chain) {
      const change = transitioned(current, event, key);
      if (!change) continue;
      current = applied(current, change.$set, change.$unset);
      $set = { ...$set, ...change.$set };
      $unset = { ...$unset, ...change.$unset };
    }
    return { current, $set, $unset };
  };
  /** Changes to stored entries, one command for all (on the local FerretDB 20 updates in one bulk write took about 6 ms, one by one 16). */
  const writeChanges = async (changes: Array<{ current: Doc; $set: Record<string, unknown>; $unset: Record<string, ''> }>) => {
    if (changes.length === 0) return;
    await Entries.bulkWrite(
      changes.map(({ current, $set, $unset }) => ({ updateOne: { filter: { _id: current._id }, update: Object.keys($unset).length > 0 ? { $set, $unset } : { $set } } })),
      { ordered: false },
    );
    for (const { current } of changes) written.set(current._id.toHexString(), current);
  };
  /**
   * New entries, written whole with their first state changes (an insert costs the local FerretDB about a fifth of
   * an update: 0.2 against 1 ms a document in groups of 20). One already written (a replayed decision, or another
   * replica's runner wrote it before this one became the writer) gets the changes as an update instead.
   */
  const writeFirsts = async (firsts: Array<{ current: Doc; chain: Chain; set: { priority?: number; noBatch?: boolean } }>) => {
    if (firsts.length === 0) return;
    const wrote = (doc: Doc) => {
      claimed.delete(doc._id.toHexString());
      written.set(doc._id.toHexString(), doc);
    };
    try {
      await Entries.insertMany(
        firsts.map(({ current }) => current),
        { lean: true, ordered: false },
      );
      for (const { current } of firsts) wrote(current);
      return;
    } catch {
      // Some were written already, or the group failed for another reason: one by one, each as it stands.
    }
    for (const { current, chain, set } of firsts) {
      try {
        await Entries.insertMany([current], { lean: true });
        wrote(current);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        claimed.delete(current._id.toHexString());
        // Keys make one entry per PR: a PR with another entry (keys out of step) is not this submission's to write.
        const stored = await Entries.findById(current._id).lean<Doc>();
        if (!stored) continue;
        const change = extended(stored, chain, set);
        if (change.current !== stored) await writeChanges([change]);
        else written.set(stored._id.toHexString(), stored);
      }
    }
  };
  /** The first record of a submission, from this process's claim, else from its key (claimed on another replica). */
  const claimOf = async (first: { entryId: string; queueId: string; prNumber: number }): Promise<Doc | null> => {
    const mine = claimed.get(first.entryId);
    if (mine) return mine;
    const key = await Keys.findById(keyFor(first.queueId, Number(first.prNumber))).lean<KeyDoc & { queueId: Types.ObjectId }>();
    return key && key.entryId.toHexString() === first.entryId ? pendingEntry(key) : null;
  };

  const recordTransitions: QueueEntryStore['recordTransitions'] = async (changes, firsts = []) => {
    const byEntry = new Map<string, Chain>();
    for (const { entryId } of firsts) byEntry.set(entryId, []);
    for (const { entryId, event, key } of changes) byEntry.set(entryId, [...(byEntry.get(entryId) ?? []), { event, key }]);
    const firstOf = new Map(firsts.map((first) => [first.entryId, first]));
    // Where an entry's claim is, should it turn out not to be written yet.
    const claimRef = new Map(changes.flatMap(({ entryId, claim }) => (claim ? [[entryId, { entryId, ...claim }] as const] : [])));
    const planned = await Promise.all(
      [...byEntry].map(async ([entryId, chain]) => {
        const first = firstOf.get(entryId);
        const ref = first ?? claimRef.get(entryId);
        const set = { priority: first?.priority, noBatch: first?.noBatch };
        // A submission this process claimed and nobody wrote here yet: written whole, without reading it first.
        const fresh = ref && !written.has(entryId) ? claimed.get(entryId) : undefined;
        if (fresh) return { isNew: true, before: fresh, chain, set };
        const before = await stored(entryId);
        if (before) return { isNew: false, before, chain, set };
        const pending = ref ? await claimOf(ref) : null;
        return pending ? { isNew: true, before: pending, chain, set } : null;
      }),
    );
    const firstsToWrite: Array<{ current: Doc; chain: Chain; set: { priority?: number; noBatch?: boolean } }> = [];
    const changed: Array<ReturnType<typeof extended>> = [];
    for (const plan of planned) {
      if (!plan) continue;
      const change = extended(plan.before, plan.chain, plan.set);
      if (plan.isNew) firstsToWrite.push({ current: change.current, chain: plan.chain, set: plan.set });
      else if (change.current !== plan.before) changed.push(change);
    }
    await Promise.all([writeFirsts(firstsToWrite), writeChanges(changed)]);
  };

  // Concurrent submits claim their keys and write their entries in groups (see GroupedWrites). The documents
  // are built here, typed, from validated input: `lean` skips mongoose's per-document hydration and validation
  // (insertMany was 3.8 % of this service's CPU samples under 64 concurrent submits, mostly those).
  const keyInserts = new GroupedWrites<KeyDoc & { queueId: Types.ObjectId }>(
    (docs) => Keys.insertMany(docs, { lean: true }),
    (doc) => Keys.create(doc),
    async (doc) => (await Keys.findById(doc._id).lean<KeyDoc>())?.entryId.equals(doc.entryId) === true,
  );
  const entryInserts = new GroupedWrites<Record<string, unknown> & { _id: Types.ObjectId; submittedAt: Date }>(
    (docs) => Entries.insertMany(docs, { lean: true }),
    (doc) => Entries.create(doc),
    async (doc) => (await Entries.findById(doc._id, { submittedAt: 1 }).lean<Doc>())?.submittedAt.getTime() === doc.submittedAt.getTime(),
  );

  /** Keys being written by this process's inserts: its finds wait for them. */
  const keysUnderWay = new Map<string, Promise<void>>();
  /** Points a PR's key at its entry; a key left pointing at an entry that was never written (a writer died between the two, before entries came first) is taken over. */
  async function writeKey(_id: string, queueId: Types.ObjectId, entryId: Types.ObjectId): Promise<void> {
    try {
      await keyInserts.write({ _id, queueId, entryId });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const key = await Keys.findById(_id).lean<KeyDoc>();
      if (key?.entryId.equals(entryId)) return;
      if (key && (await Entries.exists({ _id: key.entryId }))) throw new Error(`PR key ${_id} names another entry`);
      await Keys.updateOne({ _id }, { $set: { queueId, entryId } }, { upsert: true });
    }
  }
  /** After a duplicate insert: the PR's entry exists, so its key must too (its writer may have died before writing it). */
  async function keyOfExisting(_id: string, queueId: Types.ObjectId, prNumber: number): Promise<void> {
    await keysUnderWay.get(_id)?.catch(() => undefined);
    if (await Keys.exists({ _id })) return;
    // Rare (a crash between the two writes, or another replica's insert this instant): the one query by queue and PR.
    const existing = await Entries.findOne({ queueId, prNumber }, { _id: 1 }).lean<{ _id: Types.ObjectId }>();
    if (existing) await writeKey(_id, queueId, existing._id);
  }

  return {
    // The entry first: its unique index on (queue, PR) is what makes one entry per PR per queue. Its key
    // (what finds it by PR with one read by _id) is written after it, while the caller goes on; this process's
    // finds wait for it, and a caller answers others only once `findable` settles.
    async insert(entry) {
      const queueId = queueObjectId(entry.queueId);
      const _id = keyFor(entry.queueId, entry.prNumber);
      const entryId = new Types.ObjectId();
      const doc = entryDoc(entry, entryId, queueId);
      try {
        await entryInserts.write(doc);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        await keyOfExisting(_id, queueId, Number(entry.prNumber));
        return { ok: false, reason: 'duplicate' };
      }
      written.set(entryId.toHexString(), doc);
      const findable = writeKey(_id, queueId, entryId);
      keysUnderWay.set(_id, findable);
      findable.then(forget, forget);
      function forget() {
        if (keysUnderWay.get(_id) === findable) keysUnderWay.delete(_id);
      }
      return { ok: true, value: toRecord(doc), findable };
    },
    // Only the key: the runner writes the entry (its one writer) in the decision that takes the submission in.
    async claim(entry) {
      const queueId = queueObjectId(entry.queueId);
      const _id = keyFor(entry.queueId, entry.prNumber);
      const entryId = new Types.ObjectId();
      const pending = firstRecord(entry);
      const doc: Doc = { ...pending, _id: entryId, queueId };
      try {
        await keyInserts.write({ _id, queueId, entryId, pending });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // A key with neither an entry nor a submission (its writer died between the two, before claims held
        // the submission) is taken over; any other names the PR's entry.
        const key = await Keys.findById(_id).lean<KeyDoc>();
        if (!key || key.pending || (await Entries.exists({ _id: key.entryId }))) return { ok: false, reason: 'duplicate' };
        await Keys.updateOne({ _id }, { $set: { queueId, entryId, pending } });
      }
      claimed.set(entryId.toHexString(), doc);
      return { ok: true, value: toRecord(doc) };
    },
    async find(queueId, prNumber) {
      const _id = keyFor(queueId, Number(prNumber));
      await keysUnderWay.get(_id)?.catch(() => undefined);
      const remembered = entryIds.get(_id);
      const cached = remembered ? await Entries.findById(remembered).lean<Doc>() : null;
      if (cached) return toRecord(cached);
      entryIds.delete(_id);
      const key = await Keys.findById(_id).lean<KeyDoc & { queueId: Types.ObjectId }>();
      const doc = key ? await Entries.findById(key.entryId).lean<Doc>() : null;
      if (!doc) {
        // Submitted, and not yet decided: the entry as its submit recorded it.
        const pending = key ? pendingEntry(key) : null;
        return pending ? toRecord(pending) : null;
      }
      entryIds.set(_id, doc._id);
      return toRecord(doc);
    },
    async findById(id) {
      const _id = parseObjectId(id);
      const doc = _id ? await Entries.findById(_id).lean<Doc>() : null;
      return doc ? toRecord(doc) : null;
    },
    // The runner is the only writer of these fields, so each is a check and a write by _id (the only filter
    // FerretDB answers from an index, never a compound filter), from this process's copy or a read.
    recordTransition: (entryId, event, key) => recordTransitions([{ entryId, event, key }]),
    recordTransitions,
    async recordResubmission(entryId, change, key) {
      const current = await stored(entryId);
      if (!current || !isNewer(current.recordedKey, key)) return;
      const event: TimelineEvent = { at: change.at, state: 'NOT_READY', reason: 'resubmitted' };
      const { $set, $unset } = flat({ timeline: [...timelineOf(current), event] });
      await writeChange(
        current,
        {
          ...$set,
          attempt: change.attempt,
          priority: change.priority,
          noBatch: change.noBatch,
          submittedAt: change.at,
          state: 'NOT_READY',
          stateChangedAt: change.at,
          concludedAt: null,
          recordedKey: key,
        },
        $unset,
      );
    },
    async appendTimeline(entryId, event, key) {
      const current = await stored(entryId);
      if (!current || !isNewer(current.recordedKey, key)) return;
      const { $set, $unset } = flat({ timeline: [...timelineOf(current), event] });
      await writeChange(current, { ...$set, recordedKey: key }, $unset);
    },
    // Written without a read: what this process knew is not the whole entry any more (forgotten after the write
    // too, in case the runner remembered a copy read while it was under way).
    async recordPriority(entryId, priority, noBatch) {
      written.delete(entryId);
      await Entries.updateOne({ _id: parseObjectId(entryId) }, { $set: { priority, noBatch } });
      written.delete(entryId);
    },
    async setFacts(entryId, facts) {
      written.delete(entryId);
      await Entries.updateOne({ _id: parseObjectId(entryId) }, flat({ facts }));
      written.delete(entryId);
    },
    forgetWritten(queueId) {
      const theirs = [...written.entries()].filter(([, doc]) => doc.queueId.toHexString() === queueId);
      for (const [id] of theirs) written.delete(id);
    },
    lastWritten(entryId) {
      const doc = written.get(entryId);
      return doc ? toRecord(doc) : null;
    },
    async listEnqueued(queueId) {
      const docs = await Entries.find({ queueId: queueObjectId(queueId), state: inStates(ENQUEUED_STATES) }, { timeline: 0, timelineJson: 0 })
        .sort({ priority: 1, submittedAt: 1, _id: 1 })
        .lean<Doc[]>();
      return docs.map(toRecord);
    },
    async countEnqueued(queueId) {
      return Entries.countDocuments({ queueId: queueObjectId(queueId), state: inStates(ENQUEUED_STATES) });
    },
    async undecidedSubmissions(queueId) {
      const _id = queueObjectId(queueId);
      // Every entry has its key: as many keys as entries (the usual answer, two counts on indexes) means none waits.
      const [keys, entries] = await Promise.all([Keys.countDocuments({ queueId: _id }), Entries.countDocuments({ queueId: _id })]);
      if (keys <= entries) return [];
      const claims = await Keys.find({ queueId: _id }, { _id: 1, entryId: 1 }).lean<KeyDoc[]>();
      const written = await Entries.find({ _id: { $in: claims.map((key) => key.entryId) } }, { _id: 1 }).lean<{ _id: Types.ObjectId }[]>();
      const writtenIds = new Set(written.map((doc) => doc._id.toHexString()));
      return claims
        .filter((key) => !writtenIds.has(key.entryId.toHexString()))
        .map((key) => Number(key._id.slice(key._id.lastIndexOf(':') + 1)))
        .sort((a, b) => a - b);
    },
    async countInStates(queueId, states) {
      return Entries.countDocuments({ queueId: queueObjectId(queueId), state: inStates(states) });
    },
    async page(query) {
      const and: Record<string, unknown>[] = [{ queueId: queueObjectId(query.queueId) }];
      if (query.states) and.push({ state: inStates(query.states) });
      if (query.since || query.until) {
        const window: Record<string, Date> = {};
        if (query.since) window.$gte = query.since;
        if (query.until) window.$lte = query.until;
        // A PR is in the window when it entered or concluded within it.
        and.push({ $or: [{ submittedAt: window }, { concludedAt: window }] });
      }
      if (query.after) {
        const afterId = parseObjectId(query.after.id);
        and.push({
          $or: [
            { submittedAt: { $lt: query.after.submittedAt } },
            { submittedAt: query.after.submittedAt, _id: { $lt: afterId } },
          ],
        });
      }
      const docs = await Entries.find({ $and: and })
        .sort({ submittedAt: -1, _id: -1 })
        .limit(query.take)
        .lean<Doc[]>();
      return docs.map(toRecord);
    },
    async listChangedSince(queueId, since) {
      const docs = await Entries.find({ queueId: queueObjectId(queueId), stateChangedAt: { $gte: since } }).lean<Doc[]>();
      return docs.map(toRecord);
    },
  };
}
