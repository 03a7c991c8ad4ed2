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

export function mongoSandboxStore(connection: Connection): SandboxStore {
  const PullRequests = connection.model('SandboxPullRequest', pullRequestSchema);
  const Branches = connection.model('SandboxBranch', branchSchema);
  type Doc = { repoKey: string; number: number; json?: string; queueStatusJson?: string };
  const parse = (doc: Doc): SandboxPullRequest => {
    const pr = doc.json ? (JSON.parse(doc.json) as SandboxPullRequest) : defaultPullRequest(doc.repoKey, doc.number);
    return doc.queueStatusJson ? { ...pr, queueStatus: JSON.parse(doc.queueStatusJson) as SandboxPullRequest['queueStatus'] } : pr;
  };
  // Statuses the runner shows for many PRs at once (a decision about many submits) go as one bulk write.
  type StatusWrite = { _id: string; $set: { repoKey: string; number: number; queueStatusJson: string } };
  const statusWrites = new GroupedWrites<StatusWrite>(
    (writes) => PullRequests.bulkWrite(writes.map(({ _id, $set }) => ({ updateOne: { filter: { _id }, update: { $set }, upsert: true } })), { ordered: true }),
    ({ _id, $set }) => PullRequests.updateOne({ _id }, { $set }, { upsert: true }),
  );
  return {
    async pullRequest(repoKey, prNumber) {
      const doc = await PullRequests.findById(`${repoKey}#${Number(prNumber)}`).lean<Doc>();
      return doc ? parse(doc) : null;
    },
    async pullRequests(repoKey, prNumbers) {
      const docs = await PullRequests.find({ _id: { $in: prNumbers.map((n) => `${repoKey}#${Number(n)}`) } }).lean<Doc[]>();
      return docs.map(parse);
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
