import type { App, Repo } from '../model.js';
import type { Shapes } from '../shapes.js';
import { GitHubError, type FakeState } from '../state.js';

/** Who is calling, from the Authorization header. */
export type Actor =
  | { kind: 'installation'; login: string; app: App; installationId: number }
  /** A JWT signed as the app: only `/app/...` routes accept it. */
  | { kind: 'app'; login: string; app: App }
  /** A personal token (any non-`ghs_` token, when the fake allows them). */
  | { kind: 'user'; login: string };

export interface RouteContext {
  state: FakeState;
  shapes: Shapes;
  /** Path parameters, percent-decoded, as strings. */
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  /** The JSON body, already validated against the operation's schema. */
  body: unknown;
  actor: Actor;
  url: URL;
  /** The request's Accept header (media types such as `application/vnd.github.raw`). */
  accept: string;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A raw media type answer (e.g. a file's bytes): sent as is, not JSON and not checked against the schema. */
  raw?: { text: string; contentType: string };
}

export type Handler = (ctx: RouteContext) => RouteResult;

/** The repository named by `{owner}/{repo}`; 404 (as GitHub) when absent or not visible to the caller. */
export function repoOf(ctx: RouteContext): Repo {
  const repo = ctx.state.findRepo(ctx.params.owner ?? '', ctx.params.repo ?? '');
  if (!repo) throw new GitHubError(404, 'Not Found');
  if (ctx.actor.kind === 'installation') {
    const installation = ctx.state.installations.get(ctx.actor.installationId);
    if (!installation || installation.account.toLowerCase() !== repo.owner.toLowerCase()) throw new GitHubError(404, 'Not Found');
  }
  return repo;
}

export function body<T>(ctx: RouteContext): T {
  return (ctx.body ?? {}) as T;
}

export function ok(body: unknown, status = 200): RouteResult {
  return { status, body };
}

/** `per_page`/`page` slicing with a Link header, so Octokit's paginate stops where GitHub's would. */
export function paginate(ctx: RouteContext, items: unknown[]): RouteResult {
  const perPage = Math.min(100, Number(ctx.query.per_page ?? 30));
  const page = Math.max(1, Number(ctx.query.page ?? 1));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const headers: Record<string, string> = {};
  if (page * perPage < items.length) {
    const next = new URL(ctx.url);
    next.searchParams.set('page', String(page + 1));
    headers.link = `<${next.toString()}>; rel="next"`;
  }
  return { status: 200, body: slice, headers };
}

/** The caller's login as GitHub would record it (the bot for an installation). */
export function actorLogin(ctx: RouteContext): string {
  return ctx.actor.login;
}

export function requireApp(ctx: RouteContext, what: string): App {
  if (ctx.actor.kind !== 'installation') throw new GitHubError(403, `You must authenticate via a GitHub App to ${what}.`);
  return ctx.actor.app;
}
