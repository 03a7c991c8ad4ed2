import { commitsBetween, isAncestor, mergeBase } from '../git.js';
import { GitHubError } from '../state.js';
import { actorLogin, body, ok, paginate, repoOf, type Handler, type RouteContext } from './context.js';

/** Refs, commits, the merges API, branches and compare. */

function fullRef(ctx: RouteContext): string {
  // `{ref}` in git/refs routes is `heads/x` or `tags/x`, without the `refs/` prefix.
  return `refs/${(ctx.params.ref ?? '').replace(/^refs\//, '')}`;
}

function commitOrThrow(ctx: RouteContext, sha: string, status = 422, message = 'Object does not exist') {
  const commit = ctx.state.commits.get(sha);
  if (!commit || commit.repo !== repoOf(ctx).fullName) throw new GitHubError(status, message);
  return commit;
}

export const gitRoutes: Record<string, Handler> = {
  'git/get-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = fullRef(ctx);
    const sha = ctx.state.readRef(repo, ref);
    if (!sha) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.gitRef(repo, ref, sha));
  },

  'git/list-matching-refs': (ctx) => {
    const repo = repoOf(ctx);
    const prefix = fullRef(ctx);
    const refs = [...repo.refs.entries()].filter(([ref]) => ref.startsWith(prefix)).sort(([a], [b]) => a.localeCompare(b));
    return ok(refs.map(([ref, sha]) => ctx.shapes.gitRef(repo, ref, sha)));
  },

  'git/create-ref': (ctx) => {
    const repo = repoOf(ctx);
    const { ref, sha } = body<{ ref: string; sha: string }>(ctx);
    if (!/^refs\/[^/]+\/.+/.test(ref)) throw new GitHubError(422, `${ref} is not a valid ref name.`);
    if (repo.refs.has(ref)) throw new GitHubError(422, 'Reference already exists');
    commitOrThrow(ctx, sha);
    if (ref.startsWith('refs/heads/')) ctx.state.guardRulesets(repo, ref.slice('refs/heads/'.length), 'creation', actorLogin(ctx));
    ctx.state.setRef(repo, ref, sha, actorLogin(ctx));
    return ok(ctx.shapes.gitRef(repo, ref, sha), 201);
  },

  'git/update-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = fullRef(ctx);
    const { sha, force } = body<{ sha: string; force?: boolean }>(ctx);
    const current = repo.refs.get(ref);
    if (!current) throw new GitHubError(422, 'Reference does not exist');
    commitOrThrow(ctx, sha);
    const fastForward = isAncestor(ctx.state.commits, current, sha);
    if (!fastForward && !force) throw new GitHubError(422, 'Update is not a fast forward');
    if (!fastForward && ref.startsWith('refs/heads/')) ctx.state.guardRulesets(repo, ref.slice('refs/heads/'.length), 'non_fast_forward', actorLogin(ctx));
    if (ref.startsWith('refs/heads/')) ctx.state.guardProtectedUpdate(repo, ref.slice('refs/heads/'.length), sha, !fastForward, actorLogin(ctx));
    ctx.state.setRef(repo, ref, sha, actorLogin(ctx));
    return ok(ctx.shapes.gitRef(repo, ref, sha));
  },

  'git/delete-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref = fullRef(ctx);
    if (ref.startsWith('refs/heads/') && repo.protection.has(ref.slice('refs/heads/'.length))) {
      throw new GitHubError(422, 'Cannot delete this protected branch');
    }
    ctx.state.deleteRef(repo, ref, actorLogin(ctx));
    return { status: 204 };
  },

  'git/get-commit': (ctx) => {
    const repo = repoOf(ctx);
    return ok(ctx.shapes.gitCommit(repo, commitOrThrow(ctx, ctx.params.commit_sha ?? '', 404, 'Not Found')));
  },

  'git/create-commit': (ctx) => {
    const repo = repoOf(ctx);
    const b = body<{ message: string; tree: string; parents?: string[] }>(ctx);
    const tree = ctx.state.trees.get(b.tree);
    if (!tree) throw new GitHubError(422, 'Tree SHA does not exist');
    for (const parent of b.parents ?? []) commitOrThrow(ctx, parent, 422, 'Parent SHA does not exist or is not a commit object');
    const commit = ctx.state.commit(repo, { parents: b.parents ?? [], tree, message: b.message, author: actorLogin(ctx) });
    return ok(ctx.shapes.gitCommit(repo, commit), 201);
  },

  'repos/merge': (ctx) => {
    const repo = repoOf(ctx);
    const b = body<{ base: string; head: string; commit_message?: string }>(ctx);
    const commit = ctx.state.mergeIntoBranch(repo, b.base, b.head, b.commit_message, actorLogin(ctx));
    return commit ? ok(ctx.shapes.commit(repo, commit), 201) : { status: 204 };
  },

  'repos/get-branch': (ctx) => {
    const repo = repoOf(ctx);
    const name = ctx.params.branch ?? '';
    const sha = ctx.state.branchHead(repo, name);
    if (!sha) throw new GitHubError(404, 'Branch not found');
    return ok(ctx.shapes.branch(repo, name, sha));
  },

  'repos/list-branches': (ctx) => {
    const repo = repoOf(ctx);
    const branches = [...repo.refs.entries()]
      .filter(([ref]) => ref.startsWith('refs/heads/'))
      .map(([ref, sha]) => {
        const name = ref.slice('refs/heads/'.length);
        return { name, commit: { sha, url: `${ctx.shapes.api}/repos/${repo.fullName}/commits/${sha}` }, protected: repo.protection.has(name) };
      });
    return paginate(ctx, branches);
  },

  'repos/get-commit': (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.state.resolve(repo, ctx.params.ref ?? '');
    if (!sha) throw new GitHubError(422, `No commit found for SHA: ${ctx.params.ref}`);
    return ok(ctx.shapes.commit(repo, ctx.state.getCommit(sha)));
  },

  'repos/compare-commits-with-basehead': (ctx) => {
    const [base, head] = (ctx.params.basehead ?? '').split('...');
    return compare(ctx, base ?? '', head ?? '');
  },

  // The description also lists the older `{base}...{head}` template for the same URL,
  // and it is the more specific match for `compare/main...topic`.
  'repos/compare-commits': (ctx) => compare(ctx, ctx.params.base ?? '', ctx.params.head ?? ''),
};

function compare(ctx: RouteContext, baseName: string, headName: string) {
  const repo = repoOf(ctx);
  const base = ctx.state.resolve(repo, baseName);
  const head = ctx.state.resolve(repo, headName);
  if (!base || !head) throw new GitHubError(404, 'Not Found');
  const mb = mergeBase(ctx.state.commits, base, head);
  if (!mb) throw new GitHubError(404, `No common ancestor between ${baseName} and ${headName}.`);
  const ahead = commitsBetween(ctx.state.commits, base, head);
  const behind = commitsBetween(ctx.state.commits, head, base);
  const status = ahead.length === 0 && behind.length === 0 ? 'identical' : behind.length === 0 ? 'ahead' : ahead.length === 0 ? 'behind' : 'diverged';
  const spec = `${encodeURIComponent(baseName)}...${encodeURIComponent(headName)}`;
  const html = `${ctx.shapes.web}/${repo.fullName}/compare/${spec}`;
  return ok({
    url: `${ctx.shapes.api}/repos/${repo.fullName}/compare/${spec}`,
    html_url: html,
    permalink_url: `${ctx.shapes.web}/${repo.fullName}/compare/${base}...${head}`,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    base_commit: ctx.shapes.commit(repo, ctx.state.getCommit(base)),
    merge_base_commit: ctx.shapes.commit(repo, ctx.state.getCommit(mb)),
    status,
    ahead_by: ahead.length,
    behind_by: behind.length,
    total_commits: ahead.length,
    commits: ahead.map((c) => ctx.shapes.commit(repo, c)),
    files: [],
  });
}
