import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { conform } from './conform.js';
import { apiDescription, type Operation } from './openapi.js';
import { checkRoutes } from './routes/checks.js';
import type { Actor, Handler, RouteContext, RouteResult } from './routes/context.js';
import { gitRoutes } from './routes/git.js';
import { pullRoutes } from './routes/pulls.js';
import { appRoutes, repoRoutes } from './routes/repos.js';
import type { Shapes } from './shapes.js';
import { GitHubError, type FakeState } from './state.js';
import { responseSchema, validateRequest, validateResponse } from './validation.js';

/**
 * The HTTP side: every request is matched against GitHub's description, validated,
 * authenticated, handled, and its response completed and validated before it is
 * sent. Anything a real GitHub would reject, or that the description does not allow,
 * is answered the way GitHub answers AND recorded as a violation for the test.
 */

export type ViolationKind =
  /** Method + path not in the description. */
  | 'route'
  /** Path parameters, query or body do not validate (or the JSON does not parse). */
  | 'request'
  /** Missing/unknown credentials, or the wrong kind for the route (JWT vs installation token). */
  | 'auth'
  /** The route exists on GitHub but this fake does not serve it yet. */
  | 'unimplemented'
  /** The fake's own answer does not match the description, or the fake crashed (its bug). */
  | 'response'
  /** The fake could not build a webhook payload (a bug in the fake). */
  | 'webhook';

export interface Violation {
  kind: ViolationKind;
  method: string;
  path: string;
  operationId?: string;
  message: string;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string, as sent (percent-encoded). */
  path: string;
  query: Record<string, string | string[]>;
  body: unknown;
  operationId?: string;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  status: number;
  /** Login of the caller (`<slug>[bot]` for an installation token). */
  actor?: string;
}

/** A failure the test asked for (5xx, rate limits): answered instead of the handler. */
export interface InjectedFailure {
  /** Only this operation (e.g. `pulls/merge`); any when absent. */
  operationId?: string;
  status: number;
  /** How many matching requests fail (default 1). */
  times?: number;
  message?: string;
  headers?: Record<string, string>;
  /** The request is carried out, and only its answer is the failure: a 5xx or time-out after the write went through. */
  afterHandling?: boolean;
}

export interface ServerOptions {
  state: FakeState;
  shapes: () => Shapes;
  violations: Violation[];
  requests: RecordedRequest[];
  allowPersonalTokens: boolean;
  personalTokenLogin: string;
  failures: InjectedFailure[];
}

const handlers: Record<string, Handler> = { ...gitRoutes, ...pullRoutes, ...checkRoutes, ...repoRoutes, ...appRoutes };
const DOCS = 'https://docs.github.com/rest';
let handlersChecked = false;

export async function listen(options: ServerOptions): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    void handle(options, req, res).catch((error: unknown) => {
      // A bug in the fake: answer 500 so the client sees it, and record it.
      options.violations.push({ kind: 'response', method: req.method ?? '', path: req.url ?? '', message: `fake-github crashed: ${error instanceof Error ? error.stack : String(error)}` });
      if (!res.headersSent) send(res, 500, { message: 'fake-github internal error', documentation_url: DOCS });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://127.0.0.1:${port}` };
}

async function handle(options: ServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  // GitHub Enterprise serves the same API under /api/v3: accept both.
  const path = url.pathname.replace(/^\/api\/v3(?=\/)/, '');
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    query[key] = all.length === 1 ? all[0]! : all;
  }
  const raw = await readBody(req);
  const record: RecordedRequest = { method, path, query, body: undefined, params: {}, status: 0 };
  options.requests.push(record);
  const violate = (kind: ViolationKind, message: string, operationId?: string) => options.violations.push({ kind, method, path, operationId, message });
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    record.status = status;
    send(res, status, body, headers);
  };

  const description = apiDescription();
  if (!handlersChecked) {
    handlersChecked = true;
    const unknown = Object.keys(handlers).filter((id) => !description.operation(id));
    if (unknown.length > 0) violate('response', `fake-github serves operations GitHub's description no longer has: ${unknown.join(', ')}`);
  }

  let body: unknown;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw);
    } catch {
      violate('request', 'the body is not valid JSON');
      return reply(400, { message: 'Problems parsing JSON', documentation_url: DOCS });
    }
  }
  record.body = body;

  const match = description.match(method, path);
  if (match.kind !== 'match') {
    const message = match.kind === 'method_not_allowed' ? `${method} is not allowed on ${path} (GitHub allows ${match.allowed.join(', ')})` : `${method} ${path} is not a route in GitHub's REST description`;
    violate('route', message);
    return reply(404, { message: 'Not Found', documentation_url: DOCS });
  }
  const operation = match.operation;
  record.operationId = operation.operationId;
  record.params = match.params;

  const problems = validateRequest(operation, { params: match.params, query, body });
  if (problems.length > 0) {
    for (const p of problems) violate('request', p.message, operation.operationId);
    if (problems.some((p) => p.where === 'path')) return reply(404, { message: 'Not Found', documentation_url: DOCS });
    // GitHub words schema failures this way: details in the message, no `errors` array.
    return reply(422, {
      message: `Invalid request.\n\n${problems.map((p) => p.message).join('\n')}`,
      documentation_url: `${DOCS}#${operation.operationId}`,
      status: '422',
    });
  }

  const actor = authenticate(options, req.headers.authorization, operation);
  if ('error' in actor) {
    violate('auth', actor.error, operation.operationId);
    return reply(401, { message: actor.status === 401 ? 'Bad credentials' : actor.error, documentation_url: DOCS, status: '401' });
  }
  record.actor = actor.login;

  const failure = options.failures.find((f) => (f.times ?? 1) > 0 && (f.operationId === undefined || f.operationId === operation.operationId));
  if (failure) failure.times = (failure.times ?? 1) - 1;
  const fail = (f: InjectedFailure) => reply(f.status, { message: f.message ?? 'Injected failure', documentation_url: DOCS, status: String(f.status) }, f.headers);
  if (failure && !failure.afterHandling) return fail(failure);

  const handler = handlers[operation.operationId];
  if (!handler) {
    violate('unimplemented', `fake-github does not implement ${operation.operationId} (${operation.method} ${operation.template})`, operation.operationId);
    return reply(501, { message: `fake-github does not implement ${operation.operationId}`, documentation_url: DOCS });
  }

  const ctx: RouteContext = { state: options.state, shapes: options.shapes(), params: match.params, query, body, actor, url: new URL(req.url ?? '/', options.shapes().api), accept: String(req.headers.accept ?? '') };
  let result: RouteResult;
  try {
    result = handler(ctx);
  } catch (error) {
    if (!(error instanceof GitHubError)) throw error;
    result = { status: error.status, body: { message: error.message, documentation_url: `${DOCS}#${operation.operationId}`, ...error.extra, status: String(error.status) } };
  }
  if (failure) return fail(failure);
  if (result.raw) {
    record.status = result.status;
    res.writeHead(result.status, { 'content-type': result.raw.contentType, 'x-github-media-type': 'github.v3; param=raw', ...result.headers });
    return void res.end(result.raw.text);
  }
  reply(result.status, checkedResponse(options, operation, result, violate), result.headers);
}

/** Completes the handler's JSON from the schema, then checks it; a mismatch is the fake's bug. */
function checkedResponse(options: ServerOptions, operation: Operation, result: RouteResult, violate: (kind: ViolationKind, message: string, operationId?: string) => void): unknown {
  const success = result.status >= 200 && result.status < 300;
  const schema = responseSchema(operation, result.status);
  const body = schema && result.body !== undefined ? conform(schema, result.body, options.shapes().api) : result.body;
  const problems = validateResponse(operation, result.status, body);
  if (problems === null) {
    // Error statuses GitHub does not document per operation (401, 403, 422 on many) are normal.
    if (success) violate('response', `fake-github answered ${result.status}, which GitHub's description does not document for ${operation.operationId}`, operation.operationId);
  } else if (problems.length > 0) {
    violate('response', `fake-github's ${operation.operationId} answer does not match GitHub's schema: ${problems.slice(0, 5).join('; ')}`, operation.operationId);
  }
  return body;
}

type AuthResult = Actor | { error: string; status: 401 };

function authenticate(options: ServerOptions, header: string | undefined, operation: Operation): AuthResult {
  const { state } = options;
  const token = /^(?:token|bearer)\s+(\S+)$/i.exec(header ?? '')?.[1];
  if (!token) return { error: `no credentials sent to ${operation.operationId} (the fake's repositories are private)`, status: 401 };
  // The app's own routes take the app JWT; everything else an installation (or user) token. `/apps/{app_slug}` (any
  // App, by its slug) is a public read: it takes either.
  const anyCredentials = operation.operationId === 'apps/get-by-slug';
  const appRoute = (operation.template === '/app' || operation.template.startsWith('/app/') || /^apps\/get-(repo|org|user)-installation$/.test(operation.operationId)) && !anyCredentials;
  if (/^[\w-]+\.[\w-]+\.[\w-]*$/.test(token)) {
    if (!appRoute && !anyCredentials) return { error: `${operation.operationId} needs an installation token, not the app's JWT`, status: 401 };
    const app = state.options.app;
    return { kind: 'app', login: app.slug, app };
  }
  if (token.startsWith('ghs_')) {
    const issued = state.tokens.get(token);
    if (!issued) return { error: 'unknown installation token', status: 401 };
    if (issued.expiresAt.getTime() <= (state.options.now?.() ?? new Date()).getTime()) return { error: 'expired installation token', status: 401 };
    if (appRoute && operation.operationId !== 'apps/list-repos-accessible-to-installation') {
      return { error: `${operation.operationId} needs the app's JWT, not an installation token`, status: 401 };
    }
    const installation = state.installations.get(issued.installationId)!;
    const app = state.apps.get(installation.appId)!;
    return { kind: 'installation', login: app.botLogin, app, installationId: installation.id };
  }
  if (!options.allowPersonalTokens) return { error: 'personal tokens are not accepted by this fake', status: 401 };
  return { kind: 'user', login: options.personalTokenLogin };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined || status === 204 || status === 304 ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    'x-github-media-type': 'github.v3; format=json',
    'x-github-api-version-selected': '2022-11-28',
    // Octokit's throttling plugin reads these; the fake never limits.
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4999',
    'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
    'x-ratelimit-used': '1',
    'x-ratelimit-resource': 'core',
    ...headers,
  });
  res.end(text);
}
