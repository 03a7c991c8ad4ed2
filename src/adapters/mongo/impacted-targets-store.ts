import { Types, type Connection } from 'mongoose';
import type { ImpactedTargetsRecord } from '../../domain/records.js';
import type { ImpactedTargetsStore } from '../../ports/stores.js';
import { impactedTargetModels } from './models/impacted-targets.js';
import { ignoringDuplicateKey, upsertRetryingDuplicate } from './errors.js';
import { parseObjectId } from './object-id.js';

/** Keeps each part well under the 16 MiB document limit (BSON adds ~8 bytes per string). */
const PART_BYTES = 4 * 1024 * 1024;
/** Uploads kept per PR: CI may upload for an older head after a newer one. */
const SETS_KEPT_PER_PR = 3;

type SetDoc = { _id: Types.ObjectId; queueId: Types.ObjectId; sha: string; all: boolean; count: number; parts: number; setAt: Date; prNumber: number; partIds?: Types.ObjectId[] };
/** One stored upload of a PR, as its pointer lists it (what pruning needs). */
type Upload = { setId: Types.ObjectId; sha: string; partIds?: Types.ObjectId[] };
/** A pointer to the newest set of a PR head (or of the PR, which also lists the PR's uploads kept): see the model. */
type HeadDoc = { _id: string; setId: Types.ObjectId; prNumber: number; sha: string; all: boolean; count: number; partIds?: Types.ObjectId[]; setAt: Date; uploads?: Upload[] };

const headKey = (queueId: string, prNumber: number, sha?: string) => (sha === undefined ? `${queueId}:${Number(prNumber)}` : `${queueId}:${Number(prNumber)}:${String(sha)}`);
/** Marks that every set has its pointers. */
const COMPLETE = 'complete';

/**
 * Points a PR head (and the PR) at a set; two first upserts at once: one inserts, the other updates. `uploads`, the
 * PR's uploads kept (newest first), goes in the PR's pointer.
 */
async function pointAt(Heads: ReturnType<typeof impactedTargetModels>['heads'], queueId: string, set: Omit<SetDoc, 'queueId' | 'parts'>, uploads?: Upload[]): Promise<void> {
  const pointer = { setId: set._id, prNumber: set.prNumber, sha: set.sha, all: set.all, count: set.count, setAt: set.setAt, ...(set.partIds ? { partIds: set.partIds } : {}) };
  const upsert = (_id: string, fields: object) => Heads.updateOne({ _id }, { $set: fields }, { upsert: true });
  const pointers: Array<[string, object]> = [
    [headKey(queueId, set.prNumber, set.sha), pointer],
    [headKey(queueId, set.prNumber), uploads ? { ...pointer, uploads } : pointer],
  ];
  await Promise.all(pointers.map(([_id, fields]) => upsertRetryingDuplicate(() => upsert(_id, fields))),
  );
}

/** Sets stored before pointers existed get theirs (once: later starts find the mark and do nothing). */
export async function ensureTargetHeads(connection: Connection): Promise<number> {
  const { sets: Sets, heads: Heads } = impactedTargetModels(connection);
  if (await Heads.exists({ _id: COMPLETE })) return 0;
  // Oldest first: the newest set of each head is the last one pointed at.
  const sets = await Sets.find({}).sort({ setAt: 1, _id: 1 }).lean<SetDoc[]>();
  for (const set of sets) await pointAt(Heads, set.queueId.toHexString(), set);
  await ignoringDuplicateKey(Heads.create({ _id: COMPLETE }));
  return sets.length;
}

function splitIntoParts(targets: string[]): string[][] {
  const parts: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const target of targets) {
    const size = Buffer.byteLength(target) + 16;
    if (bytes + size > PART_BYTES && current.length > 0) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(target);
    bytes += size;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

export function mongoImpactedTargetsStore(connection: Connection): ImpactedTargetsStore {
  const { sets: Sets, parts: Parts, heads: Heads } = impactedTargetModels(connection);

  function queueObjectId(queueId: string): Types.ObjectId {
    const id = parseObjectId(queueId);
    if (!id) throw new Error(`not a queue id: ${queueId}`);
    return id;
  }

  /** The newest set of the PR head (or of the PR when no sha is given): one read by _id. */
  async function latestHead(queueId: string, prNumber: number, sha?: string): Promise<HeadDoc | null> {
    queueObjectId(queueId);
    return Heads.findById(headKey(queueId, prNumber, sha)).lean<HeadDoc>();
  }

  /** A set's targets, or null when the set was replaced meanwhile (its parts gone). */
  async function targetsOf(head: HeadDoc): Promise<string[] | 'ALL' | null> {
    if (head.all) return 'ALL';
    // Reads by _id; sets stored before their parts' ids were kept are read by setId (a scan on the local FerretDB).
    const parts = head.partIds
      ? await Promise.all(head.partIds.map((id) => Parts.findById(id).lean<{ targets: string[] }>()))
      : await Parts.find({ setId: head.setId }).sort({ part: 1 }).lean<{ targets: string[] }[]>();
    if (parts.some((part) => part === null)) return null;
    return parts.flatMap((part) => (part as { targets: string[] }).targets);
  }

  /** Each by _id (the local FerretDB reads a whole collection for any other filter, `$in` included). */
  async function deleteSets(uploads: Upload[]): Promise<void> {
    for (const upload of uploads) {
      await Sets.deleteOne({ _id: upload.setId });
      if (upload.partIds) for (const partId of upload.partIds) await Parts.deleteOne({ _id: partId });
      else await Parts.deleteMany({ setId: upload.setId }); // Stored before its parts' ids were kept.
    }
  }

  /** A PR's uploads, newest first, for a pointer stored before pointers listed them: read from the set headers, once per PR. */
  async function uploadsOfOldPointer(queueId: Types.ObjectId, prNumber: number): Promise<Upload[]> {
    const headers = await Sets.find({ queueId, prNumber }).sort({ setAt: -1, _id: -1 }).lean<SetDoc[]>();
    return headers.map((h) => ({ setId: h._id, sha: h.sha, ...(h.partIds ? { partIds: h.partIds } : {}) }));
  }

  return {
    async set(record) {
      const queueId = queueObjectId(record.queueId);
      const all = record.targets === 'ALL';
      const chunks = all ? [] : splitIntoParts(record.targets as string[]);
      const header = new Sets({
        queueId,
        prNumber: record.prNumber,
        sha: record.sha,
        all,
        count: all ? 0 : (record.targets as string[]).length,
        parts: chunks.length,
        setAt: record.setAt,
      });
      // Parts first, then the header, pointers last: readers only follow complete sets.
      const partIds = chunks.map(() => new Types.ObjectId());
      for (const [part, targets] of chunks.entries()) await Parts.create({ _id: partIds[part], setId: header._id, part, targets });
      header.set('partIds', partIds);
      await header.save();

      // The PR's uploads so far, as its pointer lists them (one read by _id; a query of the set headers grew with
      // every upload stored, of every queue, on the local FerretDB: 5,000 uploads took ten minutes). Older uploads
      // for the same sha are superseded; other shas beyond the few newest are pruned. Two uploads for one PR at once
      // may each miss the other's in their list: that set then stays stored, unused, with the queue until it goes.
      const previous = await Heads.findById(headKey(record.queueId, record.prNumber)).lean<HeadDoc>();
      const before = previous ? (previous.uploads ?? (await uploadsOfOldPointer(queueId, record.prNumber))) : [];
      const seen = new Set<string>();
      const kept: Upload[] = [];
      const stale: Upload[] = [];
      for (const upload of [{ setId: header._id, sha: record.sha, partIds }, ...before.filter((u) => !u.setId.equals(header._id))]) {
        if (seen.has(upload.sha) || seen.size >= SETS_KEPT_PER_PR) stale.push(upload);
        else {
          seen.add(upload.sha);
          kept.push(upload);
        }
      }
      await pointAt(Heads, record.queueId, { _id: header._id, prNumber: record.prNumber, sha: record.sha, all, count: header.count, setAt: record.setAt, partIds }, kept);
      await deleteSets(stale);
      // Heads pruned for good lose their pointers (one delete by _id each: a few at most).
      const pruned = new Set(stale.filter((u) => !seen.has(u.sha)).map((u) => u.sha));
      for (const sha of pruned) await Heads.deleteOne({ _id: headKey(record.queueId, record.prNumber, sha) });
    },
    async latest(queueId, prNumber, sha) {
      // A set replaced between the pointer's read and its parts' (a new upload of the same head): read again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const head = await latestHead(queueId, prNumber, sha);
        if (!head) return null;
        const targets = await targetsOf(head);
        if (targets !== null) return { queueId, prNumber: head.prNumber, sha: head.sha, targets, setAt: head.setAt };
      }
      return null;
    },
    async latestForMany(queueId, wanted) {
      const found = new Map<number, ImpactedTargetsRecord>();
      if (wanted.length === 0) return found;
      // Two queries whatever the number of PRs: every header of the queue (a few per PR), then the parts of those chosen.
      const headers = await Sets.find({ queueId: queueObjectId(queueId), prNumber: { $in: [...new Set(wanted.map((w) => Number(w.prNumber)))] } })
        .sort({ setAt: -1, _id: -1 })
        .lean<SetDoc[]>();
      const byPr = new Map<number, SetDoc[]>();
      for (const header of headers) byPr.set(header.prNumber, [...(byPr.get(header.prNumber) ?? []), header]);
      const chosen = new Map<number, SetDoc>();
      for (const { prNumber, sha } of wanted) {
        const header = byPr.get(prNumber)?.find((h) => sha === undefined || h.sha === sha);
        if (header) chosen.set(prNumber, header);
      }
      const listed = [...chosen.values()].filter((h) => !h.all);
      const parts = listed.length === 0 ? [] : await Parts.find({ setId: { $in: listed.map((h) => h._id) } }).sort({ part: 1 }).lean<{ setId: Types.ObjectId; targets: string[] }[]>();
      const partsBySet = new Map<string, string[][]>();
      for (const part of parts) partsBySet.set(part.setId.toHexString(), [...(partsBySet.get(part.setId.toHexString()) ?? []), part.targets]);
      for (const [prNumber, header] of chosen) {
        const targets = header.all ? ('ALL' as const) : (partsBySet.get(header._id.toHexString()) ?? []).flat();
        found.set(prNumber, { queueId, prNumber, sha: header.sha, targets, setAt: header.setAt });
      }
      return found;
    },
    async summary(queueId, prNumber, sha) {
      const head = await latestHead(queueId, prNumber, sha);
      return head ? { sha: head.sha, all: head.all, count: head.count } : null;
    },
  };
}
