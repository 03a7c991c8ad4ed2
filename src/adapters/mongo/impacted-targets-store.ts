import type { Connection, Types } from 'mongoose';
import type { ImpactedTargetsRecord } from '../../domain/records.js';
import type { ImpactedTargetsStore } from '../../ports/stores.js';
import { impactedTargetModels } from './models/impacted-targets.js';
import { parseObjectId } from './object-id.js';

/** Keeps each part well under the 16 MiB document limit (BSON adds ~8 bytes per string). */
const PART_BYTES = 4 * 1024 * 1024;
/** Uploads kept per PR: CI may upload for an older head after a newer one. */
const SETS_KEPT_PER_PR = 3;

type SetDoc = { _id: Types.ObjectId; sha: string; all: boolean; count: number; parts: number; setAt: Date; prNumber: number };

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
  const { sets: Sets, parts: Parts } = impactedTargetModels(connection);

  function queueObjectId(queueId: string): Types.ObjectId {
    const id = parseObjectId(queueId);
    if (!id) throw new Error(`not a queue id: ${queueId}`);
    return id;
  }

  async function latestHeader(queueId: string, prNumber: number, sha?: string): Promise<SetDoc | null> {
    const filter: Record<string, unknown> = { queueId: queueObjectId(queueId), prNumber: Number(prNumber) };
    if (sha !== undefined) filter.sha = String(sha);
    return Sets.findOne(filter).sort({ setAt: -1, _id: -1 }).lean<SetDoc>();
  }

  async function deleteSets(ids: Types.ObjectId[]): Promise<void> {
    if (ids.length === 0) return;
    await Sets.deleteMany({ _id: { $in: ids } });
    await Parts.deleteMany({ setId: { $in: ids } });
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
      // Parts first, header last: readers only follow complete headers.
      for (const [part, targets] of chunks.entries()) await Parts.create({ setId: header._id, part, targets });
      await header.save();

      // Older uploads for the same sha are superseded; other shas beyond the few newest are pruned.
      const headers = await Sets.find({ queueId, prNumber: record.prNumber })
        .sort({ setAt: -1, _id: -1 })
        .lean<SetDoc[]>();
      const seen = new Set<string>();
      const stale: Types.ObjectId[] = [];
      for (const h of headers) {
        if (seen.has(h.sha) || seen.size >= SETS_KEPT_PER_PR) stale.push(h._id);
        else seen.add(h.sha);
      }
      await deleteSets(stale);
    },
    async latest(queueId, prNumber, sha) {
      const header = await latestHeader(queueId, prNumber, sha);
      if (!header) return null;
      let targets: string[] | 'ALL' = 'ALL';
      if (!header.all) {
        const parts = await Parts.find({ setId: header._id }).sort({ part: 1 }).lean<{ targets: string[] }[]>();
        targets = parts.flatMap((p) => p.targets);
      }
      return { queueId, prNumber: header.prNumber, sha: header.sha, targets, setAt: header.setAt };
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
      const header = await latestHeader(queueId, prNumber, sha);
      return header ? { sha: header.sha, all: header.all, count: header.count } : null;
    },
  };
}
