import { createHash } from 'node:crypto';
import type { Repo } from '../model.js';
import { GitHubError } from '../state.js';
import { actorLogin, ok, paginate, repoOf, type Handler } from './context.js';

/** The repository, its branch protection and rulesets, and the app endpoints Octokit's app auth uses. */

/** GitHub Free has no branch protection or rulesets on private repositories: reading them is refused so. */
function requirePlanWithProtection(repo: Repo): void {
  if (repo.private && repo.freePlan) throw new GitHubError(403, 'Upgrade to GitHub Pro or make this repository public to enable this feature.');
}

export const repoRoutes: Record<string, Handler> = {
  'repos/get': (ctx) => {
    const repo = repoOf(ctx);
    // An installation token sees the permissions the app was granted: write, not admin.
    const permissions = { admin: false, maintain: false, push: true, triage: true, pull: true };
    return ok({ ...ctx.shapes.repo(repo), permissions, network_count: 0, subscribers_count: 0 });
  },

  'repos/get-branch-protection': (ctx) => {
    const repo = repoOf(ctx);
    requirePlanWithProtection(repo);
    const branch = ctx.params.branch ?? '';
    if (!ctx.state.branchHead(repo, branch)) throw new GitHubError(404, 'Branch not found');
    if (!repo.protection.has(branch)) throw new GitHubError(404, 'Branch not protected');
    return ok(ctx.shapes.branchProtection(repo, branch));
  },

  'repos/get-status-checks-protection': (ctx) => {
    const repo = repoOf(ctx);
    requirePlanWithProtection(repo);
    const branch = ctx.params.branch ?? '';
    if (!ctx.state.branchHead(repo, branch)) throw new GitHubError(404, 'Branch not found');
    if (!repo.protection.has(branch)) throw new GitHubError(404, 'Branch not protected');
    const checks = ctx.shapes.requiredStatusChecks(repo, branch);
    if (!checks) throw new GitHubError(404, 'Required status checks not enabled');
    return ok(checks);
  },

  'repos/get-repo-ruleset': (ctx) => {
    const repo = repoOf(ctx);
    requirePlanWithProtection(repo);
    const ruleset = repo.rulesets.find((rs) => rs.id === Number(ctx.params.ruleset_id));
    if (!ruleset) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.ruleset(repo, ruleset, actorLogin(ctx)));
  },

  'repos/get-content': (ctx) => {
    const repo = repoOf(ctx);
    const ref = typeof ctx.query.ref === 'string' ? ctx.query.ref : repo.defaultBranch;
    const sha = ctx.state.resolve(repo, ref);
    if (!sha) throw new GitHubError(404, `No commit found for the ref ${ref}`);
    const path = ctx.params.path ?? '';
    const text = ctx.state.fileAt(repo, sha, path);
    if (text === undefined) throw new GitHubError(404, 'Not Found');
    // Probot's config loader asks for the raw media type: the file's bytes, not JSON.
    if (/application\/vnd\.github(?:\.v3)?\.raw/.test(ctx.accept)) return { status: 200, raw: { text, contentType: 'text/plain; charset=utf-8' } };
    const name = path.split('/').pop() ?? path;
    const url = `${ctx.shapes.api}/repos/${repo.fullName}/contents/${path}?ref=${ref}`;
    return ok({
      type: 'file',
      encoding: 'base64',
      size: Buffer.byteLength(text),
      name,
      path,
      content: Buffer.from(text).toString('base64'),
      sha: createHash('sha1').update(`blob ${Buffer.byteLength(text)}\0${text}`).digest('hex'),
      url,
      git_url: null,
      html_url: null,
      download_url: null,
      _links: { self: url, git: null, html: null },
    });
  },

  'repos/get-branch-rules': (ctx) => {
    const repo = repoOf(ctx);
    requirePlanWithProtection(repo);
    // GitHub answers 200 with [] for a branch that does not exist, and for one without rules.
    return paginate(ctx, ctx.shapes.branchRules(repo, ctx.params.branch ?? ''));
  },
};

export const appRoutes: Record<string, Handler> = {
  'apps/create-installation-access-token': (ctx) => {
    const installation = ctx.state.installations.get(Number(ctx.params.installation_id));
    if (!installation) throw new GitHubError(404, 'Not Found');
    const { token, expiresAt } = ctx.state.issueToken(installation.id);
    const app = ctx.state.apps.get(installation.appId)!;
    return ok(
      {
        token,
        expires_at: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        permissions: ctx.shapes.app(app).permissions,
        repository_selection: 'all',
      },
      201,
    );
  },

  'apps/get-authenticated': (ctx) => ok(ctx.shapes.app(ctx.state.options.app)),

  'apps/get-by-slug': (ctx) => {
    const app = [...ctx.state.apps.values()].find((a) => a.slug === ctx.params.app_slug);
    if (!app) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.app(app));
  },

  // The App's webhook deliveries, newest first, paged by cursor as GitHub does. `status` as GitHub documents it: success
  // is a 2xx or 3xx answer, failure a 4xx or 5xx one; an attempt that could not connect (0 here) is neither.
  'apps/list-webhook-deliveries': (ctx) => {
    const attempts = ctx.state.appHook?.attempts() ?? [];
    const within = (code: number, from: number, to: number) => code >= from && code <= to;
    const items = attempts
      .map((a, i) => ({ a, id: i + 1, redelivery: attempts.slice(0, i).some((b) => b.guid === a.guid) }))
      .filter(({ a }) => ctx.query.status === undefined || (ctx.query.status === 'success' ? within(a.statusCode, 200, 399) : within(a.statusCode, 400, 599)))
      .reverse();
    const perPage = Math.min(100, Number(ctx.query.per_page ?? 30));
    const start = Number(ctx.query.cursor ?? 0);
    const page = items.slice(start, start + perPage).map(({ a, id, redelivery }) => ({
      id,
      guid: a.guid,
      delivered_at: a.at,
      redelivery,
      duration: 0.01,
      status: a.status,
      status_code: a.statusCode,
      event: a.event,
      action: a.action,
      installation_id: a.installationId,
      repository_id: a.repositoryId,
    }));
    const headers: Record<string, string> = {};
    if (start + perPage < items.length) {
      const next = new URL(ctx.url);
      next.searchParams.set('cursor', String(start + perPage));
      headers.link = `<${next.toString()}>; rel="next"`;
    }
    return { status: 200, body: page, headers };
  },

  'apps/redeliver-webhook-delivery': (ctx) => {
    const attempt = ctx.state.appHook?.attempts()[Number(ctx.params.delivery_id) - 1];
    if (!attempt) throw new GitHubError(404, 'Not Found');
    ctx.state.appHook?.redeliver(attempt.guid);
    return ok({}, 202);
  },

  'apps/get-installation': (ctx) => {
    const installation = ctx.state.installations.get(Number(ctx.params.installation_id));
    if (!installation) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.installation(installation));
  },

  'apps/list-installations': (ctx) => paginate(ctx, [...ctx.state.installations.values()].map((i) => ctx.shapes.installation(i))),

  'apps/get-repo-installation': (ctx) => {
    const repo = ctx.state.findRepo(ctx.params.owner ?? '', ctx.params.repo ?? '');
    const installation = repo && ctx.state.installationFor(repo);
    if (!installation) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.installation(installation));
  },

  'apps/get-org-installation': (ctx) => installationOfAccount(ctx, ctx.params.org ?? ''),
  'apps/get-user-installation': (ctx) => installationOfAccount(ctx, ctx.params.username ?? ''),

  'apps/list-repos-accessible-to-installation': (ctx) => {
    if (ctx.actor.kind !== 'installation') throw new GitHubError(403, 'You must authenticate with an installation access token');
    const installation = ctx.state.installations.get(ctx.actor.installationId)!;
    const repos = [...ctx.state.repos.values()].filter((r) => r.owner.toLowerCase() === installation.account.toLowerCase());
    const page = paginate(ctx, repos.map((r) => ctx.shapes.repo(r)));
    return { ...page, body: { total_count: repos.length, repositories: page.body, repository_selection: 'all' } };
  },
};

function installationOfAccount(ctx: Parameters<Handler>[0], account: string) {
  const installation = [...ctx.state.installations.values()].find((i) => i.account.toLowerCase() === account.toLowerCase());
  if (!installation) throw new GitHubError(404, 'Not Found');
  return ok(ctx.shapes.installation(installation));
}
