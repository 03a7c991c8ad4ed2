import { Schema, type Connection } from 'mongoose';
import type { SandboxPullRequest, SandboxRepositoryState } from '../../adapters/sandbox/sandbox-repository.js';
import type { SandboxStore } from '../../ports/sandbox-store.js';
import { isDuplicateKeyError } from './errors.js';

/** `_id` is `<repo key>#<number>`; the PR is JSON (its behaviour and queue status are the sandbox's own format). */
const pullRequestSchema = new Schema(
  { _id: { type: String, required: true }, repoKey: { type: String, required: true }, number: { type: Number, required: true }, json: { type: String, required: true } },
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
  const parse = (doc: { json: string }) => JSON.parse(doc.json) as SandboxPullRequest;
  return {
    async pullRequest(repoKey, prNumber) {
      const doc = await PullRequests.findById(`${repoKey}#${Number(prNumber)}`).lean<{ json: string }>();
      return doc ? parse(doc) : null;
    },
    async pullRequests(repoKey, prNumbers) {
      const docs = await PullRequests.find({ _id: { $in: prNumbers.map((n) => `${repoKey}#${Number(n)}`) } }).lean<{ json: string }[]>();
      return docs.map(parse);
    },
    async savePullRequest(repoKey, pr) {
      await PullRequests.updateOne({ _id: `${repoKey}#${pr.number}` }, { $set: { repoKey, number: pr.number, json: JSON.stringify(pr) } }, { upsert: true });
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
      const [prs, branches] = await Promise.all([PullRequests.find({ repoKey }).lean<{ json: string }[]>(), Branches.find({ repoKey }).lean<{ name: string; sha: string }[]>()]);
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
