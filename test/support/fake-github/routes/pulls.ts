import { commitsBetween } from '../git.js';
import { GitHubError, type MergeMethod } from '../state.js';
import { actorLogin, body, ok, paginate, repoOf, type Handler, type RouteContext } from './context.js';

/** Pull requests, and the issues API as it applies to them (labels, comments). */

/** "Lists a maximum of 250 commits for a pull request" (GitHub's documentation of pulls/list-commits). */
export const MAX_PULL_REQUEST_COMMITS = 250;

function prOf(ctx: RouteContext, param = 'pull_number') {
  const repo = repoOf(ctx);
  return { repo, pr: ctx.state.pull(repo, Number(ctx.params[param])) };
}

function labelsJson(ctx: RouteContext, param = 'issue_number') {
  const { repo, pr } = prOf(ctx, param);
  return pr.labels.map((name) => ctx.shapes.label(repo, ctx.state.label(repo, name)));
}

/** add-labels accepts `{labels: [...]}` with names or `{name}` objects (older clients send a bare array). */
function labelNames(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : ((raw as { labels?: unknown[] } | undefined)?.labels ?? []);
  return list.map((l) => (typeof l === 'string' ? l : String((l as { name: string }).name)));
}

export const pullRoutes: Record<string, Handler> = {
  'pulls/get': (ctx) => {
    const { repo, pr } = prOf(ctx);
    let mergeability = ctx.state.mergeability(repo, pr);
    // GitHub computes mergeability in the background: the first reads may say null.
    if (pr.unknownReads > 0 && pr.state === 'open') {
      pr.unknownReads -= 1;
      mergeability = { mergeable: null, mergeableState: 'unknown' };
    }
    return ok(ctx.shapes.pull(repo, pr, mergeability));
  },

  'pulls/list': (ctx) => {
    const repo = repoOf(ctx);
    const state = String(ctx.query.state ?? 'open');
    const head = ctx.query.head === undefined ? undefined : String(ctx.query.head);
    const base = ctx.query.base === undefined ? undefined : String(ctx.query.base);
    const pulls = [...repo.pulls.values()]
      .filter((pr) => state === 'all' || pr.state === state)
      .filter((pr) => head === undefined || `${repo.owner}:${pr.headRef}`.toLowerCase() === head.toLowerCase() || pr.headRef === head)
      .filter((pr) => base === undefined || pr.baseRef === base)
      .sort((a, b) => b.number - a.number);
    return paginate(ctx, pulls.map((pr) => ctx.shapes.pull(repo, pr)));
  },

  'pulls/create': (ctx) => {
    const repo = repoOf(ctx);
    const b = body<{ title?: string; head: string; base: string; body?: string; draft?: boolean }>(ctx);
    const head = b.head.includes(':') ? b.head.slice(b.head.indexOf(':') + 1) : b.head;
    if (!ctx.state.branchHead(repo, head)) {
      throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] });
    }
    const pr = ctx.state.openPull(repo, { title: b.title, body: b.body ?? null, head, base: b.base, draft: b.draft, user: actorLogin(ctx) });
    return ok(ctx.shapes.pull(repo, pr), 201);
  },

  'pulls/update': (ctx) => {
    const { repo, pr } = prOf(ctx);
    const b = body<{ title?: string; body?: string; state?: 'open' | 'closed'; base?: string }>(ctx);
    const sender = actorLogin(ctx);
    ctx.state.editPull(repo, pr.number, { title: b.title, body: b.body, base: b.base }, sender);
    if (b.state === 'closed') ctx.state.closePull(repo, pr.number, sender);
    if (b.state === 'open') ctx.state.reopenPull(repo, pr.number, sender);
    return ok(ctx.shapes.pull(repo, pr));
  },

  'pulls/merge': (ctx) => {
    const { repo, pr } = prOf(ctx);
    // GitHub refuses a merge right after its base moved (it is still recomputing): back-to-back merges of a batch hit this.
    const moved = ctx.state.lastBranchUpdate(repo, pr.baseRef);
    if (moved !== undefined && Date.now() - moved < ctx.state.options.baseModifiedWindowMs) throw new GitHubError(405, 'Base branch was modified. Review and try the merge again.');
    const b = body<{ commit_title?: string; commit_message?: string; sha?: string; merge_method?: MergeMethod } | null>(ctx) ?? {};
    const { sha } = ctx.state.mergePull(repo, pr.number, { method: b.merge_method, title: b.commit_title, message: b.commit_message, sha: b.sha }, actorLogin(ctx));
    return ok({ sha, merged: true, message: 'Pull Request successfully merged' });
  },

  'pulls/check-if-merged': (ctx) => {
    const { pr } = prOf(ctx);
    return { status: pr.merged ? 204 : 404 };
  },

  'pulls/list-commits': (ctx) => {
    const { repo, pr } = prOf(ctx);
    const base = ctx.state.branchHead(repo, pr.baseRef) ?? pr.headSha;
    // GitHub lists at most 250 commits of a pull request (its first 250, oldest first), whatever the pages asked.
    const listed = commitsBetween(ctx.state.commits, base, pr.headSha).slice(0, MAX_PULL_REQUEST_COMMITS);
    return paginate(ctx, listed.map((c) => ctx.shapes.commit(repo, c)));
  },

  'pulls/list-reviews': (ctx) => {
    const { repo, pr } = prOf(ctx);
    return paginate(ctx, pr.reviews.map((r) => ctx.shapes.review(repo, pr, r)));
  },

  'repos/list-pull-requests-associated-with-commit': (ctx) => {
    const repo = repoOf(ctx);
    const sha = ctx.params.commit_sha ?? '';
    const pulls = [...repo.pulls.values()].filter((pr) => pr.headSha === sha || pr.mergeCommitSha === sha);
    return paginate(ctx, pulls.map((pr) => ctx.shapes.pull(repo, pr)));
  },

  'issues/get': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    return ok(ctx.shapes.issue(repo, pr));
  },

  'issues/list-labels-on-issue': (ctx) => paginate(ctx, labelsJson(ctx)),

  // The issue's events, oldest first: here its label changes, each with who made it.
  'issues/list-events': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    return paginate(
      ctx,
      pr.labelEvents.map((e) => ({
        id: e.id,
        node_id: ctx.shapes.nodeId('LabeledEvent', e.id),
        url: `${ctx.shapes.api}/repos/${repo.fullName}/issues/events/${e.id}`,
        actor: ctx.shapes.user(e.actor),
        event: e.event,
        commit_id: null,
        commit_url: null,
        created_at: e.createdAt,
        label: { name: e.label, color: ctx.state.label(repo, e.label).color },
        // As GitHub: an App's installation acting names the App.
        performed_via_github_app: appOfBot(ctx, e.actor),
      })),
    );
  },

  'issues/add-labels': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    ctx.state.addLabels(repo, pr.number, labelNames(ctx.body), actorLogin(ctx));
    return ok(labelsJson(ctx));
  },

  'issues/set-labels': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    const wanted = labelNames(ctx.body);
    for (const name of [...pr.labels]) if (!wanted.some((w) => w.toLowerCase() === name.toLowerCase())) ctx.state.removeLabel(repo, pr.number, name, actorLogin(ctx));
    ctx.state.addLabels(repo, pr.number, wanted, actorLogin(ctx));
    return ok(labelsJson(ctx));
  },

  'issues/remove-label': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    ctx.state.removeLabel(repo, pr.number, ctx.params.name ?? '', actorLogin(ctx));
    return ok(labelsJson(ctx));
  },

  'issues/remove-all-labels': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    for (const name of [...pr.labels]) ctx.state.removeLabel(repo, pr.number, name, actorLogin(ctx));
    return { status: 204 };
  },

  'issues/create-comment': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    const comment = ctx.state.addComment(repo, pr.number, body<{ body: string }>(ctx).body, actorLogin(ctx));
    return ok(ctx.shapes.comment(repo, comment), 201);
  },

  'issues/list-comments': (ctx) => {
    const { repo, pr } = prOf(ctx, 'issue_number');
    // `since`: only comments updated at or after it (ISO 8601), as GitHub's.
    const since = typeof ctx.query.since === 'string' ? Date.parse(ctx.query.since) : Number.NEGATIVE_INFINITY;
    return paginate(ctx, repo.comments.filter((c) => c.issueNumber === pr.number && Date.parse(c.updatedAt) >= since).map((c) => ctx.shapes.comment(repo, c)));
  },

  'issues/update-comment': (ctx) => {
    const repo = repoOf(ctx);
    const comment = repo.comments.find((c) => c.id === Number(ctx.params.comment_id));
    if (!comment) throw new GitHubError(404, 'Not Found');
    comment.body = body<{ body: string }>(ctx).body;
    comment.updatedAt = ctx.state.now();
    ctx.state.emit({ name: 'issue_comment', action: 'edited', repo: repo.fullName, number: comment.issueNumber, commentId: comment.id, sender: actorLogin(ctx) });
    return ok(ctx.shapes.comment(repo, comment));
  },

  'issues/delete-comment': (ctx) => {
    const repo = repoOf(ctx);
    const index = repo.comments.findIndex((c) => c.id === Number(ctx.params.comment_id));
    if (index < 0) throw new GitHubError(404, 'Not Found');
    const comment = repo.comments[index]!;
    // Emitted first: the payload is built now and still finds the comment.
    ctx.state.emit({ name: 'issue_comment', action: 'deleted', repo: repo.fullName, number: comment.issueNumber, commentId: comment.id, sender: actorLogin(ctx) });
    repo.comments.splice(index, 1);
    return { status: 204 };
  },

  'repos/get-collaborator-permission-level': (ctx) => {
    const repo = repoOf(ctx);
    const login = ctx.params.username ?? '';
    const p = ctx.state.permission(repo, login);
    // `permission` is the legacy four-level value; `role_name` the real role.
    const legacy = p === 'maintain' ? 'write' : p === 'triage' ? 'read' : p;
    const user = ctx.shapes.user(login);
    const permissions = { admin: p === 'admin', maintain: p === 'admin' || p === 'maintain', push: ['admin', 'maintain', 'write'].includes(p), triage: p !== 'read' && p !== 'none', pull: p !== 'none' };
    return ok({ permission: legacy, role_name: p, user: { ...user, permissions, role_name: p } });
  },
};

/** The App whose installation acts as `login` (`<slug>[bot]`), as issue events name it; null for anyone else. */
function appOfBot(ctx: RouteContext, login: string): Record<string, unknown> | null {
  const app = [...ctx.state.apps.values()].find((a) => a.botLogin.toLowerCase() === login.toLowerCase());
  if (!app) return null;
  const owner = ctx.shapes.user('octo-org');
  return { id: app.id, slug: app.slug, node_id: ctx.shapes.nodeId('Integration', app.id), owner, name: app.name, description: null, external_url: `${ctx.shapes.web}/apps/${app.slug}`, html_url: `${ctx.shapes.web}/apps/${app.slug}`, created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z', permissions: {}, events: [] };
}
