import type { CheckAnnotation, CheckRun, CommitStatus } from '../model.js';
import { GitHubError } from '../state.js';
import { actorLogin, body, ok, paginate, repoOf, requireApp, type Handler, type RouteContext } from './context.js';

/** Check runs (apps only, as on GitHub) and commit statuses. */

interface CheckRunBody {
  name?: string;
  head_sha?: string;
  details_url?: string;
  external_id?: string;
  status?: CheckRun['status'];
  conclusion?: string;
  started_at?: string;
  completed_at?: string;
  output?: { title?: string; summary?: string; text?: string; annotations?: CheckAnnotation[] };
}

function shaOfRef(ctx: RouteContext): string {
  const sha = ctx.state.resolve(repoOf(ctx), ctx.params.ref ?? '');
  if (!sha) throw new GitHubError(422, `No commit found for SHA: ${ctx.params.ref}`);
  return sha;
}

function runFields(b: CheckRunBody) {
  return {
    name: b.name,
    status: b.status,
    conclusion: b.conclusion,
    startedAt: b.started_at,
    completedAt: b.completed_at,
    detailsUrl: b.details_url,
    externalId: b.external_id,
    output: b.output ? { title: b.output.title ?? null, summary: b.output.summary ?? null, text: b.output.text ?? null, annotations: b.output.annotations ?? [] } : undefined,
  };
}

/** `filter=latest` (the default): the most recent run per name and app. */
function latestPerName(runs: CheckRun[]): CheckRun[] {
  const latest = new Map<string, CheckRun>();
  for (const run of runs) latest.set(`${run.appId}\u0000${run.name}`, run);
  return [...latest.values()];
}

export const checkRoutes: Record<string, Handler> = {
  'checks/create': (ctx) => {
    const repo = repoOf(ctx);
    const app = requireApp(ctx, 'create a check run');
    const b = body<CheckRunBody>(ctx);
    const run = ctx.state.createCheckRun(repo, app.id, { ...runFields(b), name: b.name!, headSha: b.head_sha! }, actorLogin(ctx));
    return ok(ctx.shapes.checkRun(run), 201);
  },

  'checks/update': (ctx) => {
    const repo = repoOf(ctx);
    const app = requireApp(ctx, 'update a check run');
    const run = ctx.state.checkRuns.get(Number(ctx.params.check_run_id));
    if (!run || run.repo !== repo.fullName) throw new GitHubError(404, 'Not Found');
    if (run.appId !== app.id) throw new GitHubError(403, 'Invalid app_id: only the app that created a check run can update it');
    ctx.state.updateCheckRun(run, runFields(body<CheckRunBody>(ctx)), actorLogin(ctx));
    return ok(ctx.shapes.checkRun(run));
  },

  'checks/get': (ctx) => {
    const repo = repoOf(ctx);
    const run = ctx.state.checkRuns.get(Number(ctx.params.check_run_id));
    if (!run || run.repo !== repo.fullName) throw new GitHubError(404, 'Not Found');
    return ok(ctx.shapes.checkRun(run));
  },

  'checks/list-for-ref': (ctx) => {
    const repo = repoOf(ctx);
    let runs = ctx.state.checkRunsOn(repo, shaOfRef(ctx));
    if (ctx.query.filter !== 'all') runs = latestPerName(runs);
    if (ctx.query.check_name !== undefined) runs = runs.filter((r) => r.name === ctx.query.check_name);
    if (ctx.query.status !== undefined) runs = runs.filter((r) => r.status === ctx.query.status);
    if (ctx.query.app_id !== undefined) runs = runs.filter((r) => r.appId === Number(ctx.query.app_id));
    const page = paginate(ctx, runs.reverse().map((r) => ctx.shapes.checkRun(r)));
    return { ...page, body: { total_count: runs.length, check_runs: page.body } };
  },

  'checks/list-for-suite': (ctx) => {
    const repo = repoOf(ctx);
    const runs = [...ctx.state.checkRuns.values()].filter((r) => r.repo === repo.fullName && r.checkSuiteId === Number(ctx.params.check_suite_id));
    const page = paginate(ctx, runs.map((r) => ctx.shapes.checkRun(r)));
    return { ...page, body: { total_count: runs.length, check_runs: page.body } };
  },

  'repos/create-commit-status': (ctx) => {
    const repo = repoOf(ctx);
    const b = body<{ state: CommitStatus['state']; target_url?: string | null; description?: string | null; context?: string }>(ctx);
    const status = ctx.state.createStatus(repo, ctx.params.sha ?? '', { state: b.state, context: b.context, description: b.description, targetUrl: b.target_url }, actorLogin(ctx));
    return ok(ctx.shapes.status(status), 201);
  },

  'repos/list-commit-statuses-for-ref': (ctx) => {
    const repo = repoOf(ctx);
    return paginate(ctx, ctx.state.statusesOn(repo, shaOfRef(ctx)).reverse().map((s) => ctx.shapes.status(s)));
  },

  'repos/get-combined-status-for-ref': (ctx) => {
    const repo = repoOf(ctx);
    const sha = shaOfRef(ctx);
    const combined = ctx.state.combinedStatus(repo, sha);
    return ok({
      state: combined.state,
      statuses: combined.statuses.map((s) => ctx.shapes.status(s)),
      sha,
      total_count: combined.statuses.length,
      repository: ctx.shapes.repo(repo),
      commit_url: `${ctx.shapes.api}/repos/${repo.fullName}/commits/${sha}`,
      url: `${ctx.shapes.api}/repos/${repo.fullName}/commits/${sha}/status`,
    });
  },
};
