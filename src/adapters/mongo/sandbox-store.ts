import { Schema, type Connection } from 'mongoose';
import { defaultPullRequest, type SandboxPullRequest, type SandboxRepositoryState } from '../../adapters/sandbox/sandbox-repository.js';
import type { SandboxStore } from '../../ports/sandbox-store.js';
import { isDuplicateKeyError } from './errors.js';
import { GroupedWrites } from './grouped-writes.js';

/**
 * `_id` is `<repo key>#<number>`; the PR is JSON (its behaviour and queue status are the sandbox's own format).
 * The queue's status is also kept on its own (`queueStatusJson`), so showing it is one write without a read;
 * a PR with only a status stored is otherwise as it was created (no `json`).
 */
const pullRequestSchema = new Schema(
  {
    _id: { type: String, required: true },
    repoKey: { type: String, required: true },
    number: { type: Number, required: true },
    json: { type: String },
    queueStatusJson: { type: String },
  },
  { collection: 'sandbox_pull_requests', versionKey: false },
);
pullRequestSchema.index({ repoKey: 1, number: 1 });

/** `_id` is `<repo key>#<branch>`. */
const branchSchema = new Schema(
  { _id: { type: String, required: true }, repoKey: { type: String, required: true }, name: { type: String, required: true }, sha: { type: String, required: true } },
  { collection: 'sandbox_branches', versionKey: false },
);
branchSchema.index({ repoKey: 1 });

/**
 * Which documents of an unordered insert failed as duplicates (the others were inserted), or null when some
 * failed otherwise or the error does not say: then every one is written again as an (idempotent) upsert.
 */
function duplicatesAmong(error: unknown, count: number): Set<number> | null {
  const list = (error as { writeErrors?: unknown }).writeErrors;
  const writeErrors = (Array.isArray(list) ? list : list ? [list] : []) as Array<{ index?: unknown; code?: unknown }>;
  if (writeErrors.length === 0 || writeErrors.some((e) => e.code !== 11000 || typeof e.index !== 'number' || e.index >= count)) return null;
  return new Set(writeErrors.map((e) => e.index as number));
}

export function mongoSandboxStore(connection: Connection): SandboxStore {
  const PullRequests = connection.model('SandboxPullRequest', pullRequestSchema);
  const Branches = connection.model('SandboxBranch', branchSchema);
  type Doc = { repoKey: string; number: number; json?: string; queueStatusJson?: string };
  const parse = (doc: Doc): SandboxPullRequest => {
    const pr = doc.json ? (JSON.parse(doc.json) as SandboxPullRequest) : defaultPullRequest(doc.repoKey, doc.number);
    return doc.queueStatusJson ? { ...pr, queueStatus: JSON.parse(doc.queueStatusJson) as SandboxPullRequest['queueStatus'] } : pr;
  };
  // Statuses the runner shows for many PRs at once (a decision about many submits) go as one command.
  type StatusWrite = { _id: string; $set: { repoKey: string; number: number; queueStatusJson: string } };
  const upserts = (writes: StatusWrite[]) =>
    PullRequests.bulkWrite(writes.map(({ _id, $set }) => ({ updateOne: { filter: { _id }, update: { $set }, upsert: true } })), { ordered: true });
  const statusWrites = new GroupedWrites<StatusWrite>(async (writes) => {
    // A PR never stored (most PRs the queue is shown, unless a demo shaped them) gets its status as an insert, on
    // the local FerretDB about a fifth of an update's cost; the others (the duplicates) as updates, after, in order.
    try {
      await PullRequests.insertMany(
        writes.map(({ _id, $set }) => ({ _id, ...$set })),
        { ordered: false, lean: true },
      );
    } catch (error) {
      const duplicates = duplicatesAmong(error, writes.length);
      await upserts(duplicates ? writes.filter((_, index) => duplicates.has(index)) : writes);
    }
  }, ({ _id, $set }) => PullRequests.updateOne({ _id }, { $set }, { upsert: true }));
  return {
    async pullRequest(repoKey, prNumber) {
      const doc = await PullRequests.findById(`${repoKey}#${Number(prNumber)}`).lean<Doc>();
      return doc ? parse(doc) : null;
    },
    async pullRequests(repoKey, prNumbers) {
      // One read by _id each, at once: the local FerretDB answers `$in` by reading the whole collection (every
      // sandbox PR of every repository), which a run's start and landing did with thousands stored.
      const docs = await Promise.all([...new Set(prNumbers.map(Number))].map((n) => PullRequests.findById(`${repoKey}#${n}`).lean<Doc>()));
      return docs.filter((doc): doc is NonNullable<typeof doc> => doc !== null).map(parse);
    },
    async savePullRequest(repoKey, pr) {
      const { queueStatus, ...rest } = pr;
      const $set = { repoKey, number: pr.number, json: JSON.stringify(rest), ...(queueStatus ? { queueStatusJson: JSON.stringify(queueStatus) } : {}) };
      await PullRequests.updateOne({ _id: `${repoKey}#${pr.number}` }, { $set }, { upsert: true });
    },
    async setQueueStatus(repoKey, prNumber, status) {
      await statusWrites.write({ _id: `${repoKey}#${Number(prNumber)}`, $set: { repoKey, number: Number(prNumber), queueStatusJson: JSON.stringify(status) } });
    },
    async branch(repoKey, name) {
      const doc = await Branches.findById(`${repoKey}#${name}`).lean<{ sha: string }>();
      return doc?.sha ?? null;
    },
    async moveBranch(repoKey, name, from, to) {
      const _id = `${repoKey}#${name}`;
      if (from === null) {
        try {
          await Branches.create({ _id, repoKey, name, sha: to });
          return true;
        } catch (error) {
          if (isDuplicateKeyError(error)) return false;
          throw error;
        }
      }
      const result = await Branches.updateOne({ _id, sha: from }, { $set: { sha: to } });
      return result.matchedCount === 1;
    },
    async repository(repoKey) {
      const [prs, branches] = await Promise.all([PullRequests.find({ repoKey }).lean<Doc[]>(), Branches.find({ repoKey }).lean<{ name: string; sha: string }[]>()]);
      const state: SandboxRepositoryState = { branches: {}, pullRequests: {} };
      for (const branch of branches) state.branches[branch.name] = branch.sha;
      for (const doc of prs) {
        const pr = parse(doc);
        state.pullRequests[String(pr.number)] = pr;
      }
      return state;
    },
  };
}
