import type { Server } from 'node:http';
import { treeSha } from './git.js';
import { FakeCi } from './ci.js';
import { FakeRepo } from './fake-repo.js';
import type { App, CheckRun, CommitStatus, Permission, Sha } from './model.js';
import { listen, type InjectedFailure, type RecordedRequest, type Violation } from './server.js';
import { Shapes } from './shapes.js';
import { FakeState } from './state.js';
import { FakeWebhooks, type WebhookOptions } from './webhooks.js';

/**
 * A stateful fake of GitHub's REST API on 127.0.0.1 for end-to-end tests, whose
 * every request is checked against GitHub's published OpenAPI description.
 *
 *   const fake = await startFakeGitHub();
 *   const repo = fake.createRepo('acme/widgets');
 *   const pr = repo.openPullRequest({ title: 'Add thing', labels: ['merge-queue'] });
 *   fake.ci.complete(repo.pullRequest(pr).headSha, 'ci', 'success');
 *   // ... point the app at fake.baseUrl, deliver webhooks with fake.webhooks.deliverTo(...)
 *   expect(fake.violations).toEqual([]);
 *   await fake.close();
 */

export type { InjectedFailure, Violation, ViolationKind, RecordedRequest } from './server.js';
export type { Delivery, WebhookTarget, Payload } from './webhook-delivery.js';
export { deepMerge, deliver, findExample, signatureFor } from './webhook-delivery.js';
export type { WebhookOptions, BuiltEvent, ConcurrentDelivery } from './webhooks.js';
export type { FakeEvent, Permission, Sha } from './model.js';
export { GitHubError, type MergeMethod } from './state.js';
export { FakeCi, type AutoRunOptions, type CheckConclusion } from './ci.js';
export { FakeRepo, type CommentView, type ProtectionOptions, type PullRequestView, type RulesetOptions } from './fake-repo.js';

export interface FakeGitHubOptions {
  /** The GitHub App under test (its bot is `<slug>[bot]`). Default: id 1, slug `merge-queue`. */
  app?: { id?: number; slug?: string; name?: string };
  /** Fixed clock for timestamps and token expiry. */
  now?: () => Date;
  /** Permission of users who are neither the owner nor given one with `setPermission`. Default `read`. */
  defaultPermission?: Permission;
  /** Refuse merges and pushes that branch protection / rulesets would refuse. Default true. */
  enforceBranchProtection?: boolean;
  /** Reads of each open PR answering `mergeable: null` after a push to its base, as GitHub recomputes. Default 1. */
  mergeableUnknownAfterBasePush?: number;
  /** For this long (ms) after a push to a branch, PUT pulls/{n}/merge into it answers 405 "Base branch was modified". Default 1000. */
  baseModifiedWindowMs?: number;
  /**
   * For this long (ms) after a branch moves, reads of its ref (GET git/ref) answer the head it had before, as
   * GitHub's API may from a lagging replica. Default 0 (always current).
   */
  staleRefReadsMs?: number;
  /**
   * How long after a push that takes in an open PR's head GitHub marks the PR merged (its `closed` webhook then), as
   * GitHub does in the background: meanwhile the PR reads open. Default 0 (at once, before the push's answer).
   */
  mergedMarkDelayMs?: number;
  /** Accept any non-`ghs_` token as a personal token of `personalTokenLogin`. Default true. */
  allowPersonalTokens?: boolean;
  personalTokenLogin?: string;
  /** Origin of `html_url`s. Default https://github.com. */
  webOrigin?: string;
  /** Deliver webhooks to the app from the start (see `webhooks.deliverTo`). */
  webhooks?: WebhookOptions;
}

export interface CheckRunView {
  id: number;
  name: string;
  headSha: Sha;
  status: CheckRun['status'];
  conclusion: string | null;
  output: CheckRun['output'];
  detailsUrl: string | null;
  /** Slug of the app that created it (`github-actions` for `ci.*`, the app under test for API calls). */
  app: string;
}

export async function startFakeGitHub(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const fake = new FakeGitHub(options);
  await fake.listen();
  return fake;
}

export class FakeGitHub {
  /** Use as Octokit's `baseUrl` (also served under `/api/v3`, as GitHub Enterprise). */
  baseUrl = '';
  readonly state: FakeState;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Protocol violations (by the client, or the fake's own drift): empty in a good test. */
  readonly violations: Violation[] = [];
  readonly webhooks: FakeWebhooks;
  /** Pending injected failures (see `failNext`). */
  readonly failures: InjectedFailure[] = [];
  readonly app: App;
  readonly ciApp: App;
  readonly ci: FakeCi;
  private server?: Server;
  private shapes?: Shapes;
  private readonly webOrigin: string;

  constructor(private readonly options: FakeGitHubOptions = {}) {
    const slug = options.app?.slug ?? 'merge-queue';
    this.app = { id: options.app?.id ?? 1, slug, name: options.app?.name ?? 'Merge Queue', botLogin: `${slug}[bot]` };
    this.ciApp = { id: 15368, slug: 'github-actions', name: 'GitHub Actions', botLogin: 'github-actions[bot]' };
    this.webOrigin = options.webOrigin ?? 'https://github.com';
    this.state = new FakeState({
      now: options.now,
      app: this.app,
      ciApp: this.ciApp,
      mergeableUnknownAfterBasePush: options.mergeableUnknownAfterBasePush ?? 1,
      baseModifiedWindowMs: options.baseModifiedWindowMs ?? 1_000,
      staleRefReadsMs: options.staleRefReadsMs ?? 0,
      mergedMarkDelayMs: options.mergedMarkDelayMs ?? 0,
      defaultPermission: options.defaultPermission ?? 'read',
      enforceBranchProtection: options.enforceBranchProtection ?? true,
    });
    this.webhooks = new FakeWebhooks(this.state, this.shapesNow(), (message) => this.violations.push({ kind: 'webhook', method: '', path: '', message }));
    if (options.webhooks) this.webhooks.deliverTo(options.webhooks);
    this.ci = new FakeCi(this);
  }

  /** @internal started by startFakeGitHub */
  async listen(): Promise<void> {
    const { server, baseUrl } = await listen({
      state: this.state,
      shapes: () => this.shapesNow(),
      violations: this.violations,
      requests: this.requests,
      allowPersonalTokens: this.options.allowPersonalTokens ?? true,
      personalTokenLogin: this.options.personalTokenLogin ?? 'octocat',
      failures: this.failures,
    });
    this.server = server;
    this.baseUrl = baseUrl;
    // URLs in JSON name the real port from now on.
    this.shapesNow().api = baseUrl;
  }

  async close(): Promise<void> {
    this.ci.stop();
    // A marking still to come would emit into a service already gone.
    for (const timer of this.state.markings) clearTimeout(timer);
    this.state.markings.clear();
    await this.webhooks.idle();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    // Octokit keeps sockets alive; without this close() would wait for them to time out.
    server.closeAllConnections();
    await closed;
  }

  // ---- setup ------------------------------------------------------------------

  /**
   * A repository with one empty initial commit on its default branch, installed for the app unless `installationId: null`.
   * `freePlan`: its owner is on GitHub Free, so a private one cannot read branch protection or rules (403).
   */
  createRepo(fullName: string, options: { defaultBranch?: string; private?: boolean; freePlan?: boolean; installationId?: number | null; deleteBranchOnMerge?: boolean } = {}): FakeRepo {
    this.state.createRepo(fullName, options);
    return new FakeRepo(this, fullName);
  }

  repo(fullName: string): FakeRepo {
    this.state.repo(fullName);
    return new FakeRepo(this, fullName);
  }

  /**
   * Renames a repository as its admin would (same owner): a `repository` `renamed` webhook (none with `silent`, as
   * for an App not subscribed to it); the old name still answers.
   */
  renameRepo(fullName: string, newName: string, options: { silent?: boolean } = {}): FakeRepo {
    const repo = this.state.renameRepo(fullName, newName, 'admin', options);
    return new FakeRepo(this, repo.fullName);
  }

  /** The app uninstalled from an account, as its owner would (no webhook: send the one a test wants, when it wants). */
  uninstallApp(account: string): void {
    this.state.uninstall(account);
  }

  /** The app installed on an account again (a new installation id). */
  installApp(account: string): number {
    return this.state.install(account).id;
  }

  /** The account's owner suspends the app, or lifts the suspension (no webhook, as above). */
  suspendApp(account: string, suspended: boolean): void {
    this.state.suspend(account, suspended);
  }

  /** The app's installation id on this account (created with the repository). */
  installationId(account: string): number {
    const installation = [...this.state.installations.values()].find((i) => i.account.toLowerCase() === account.toLowerCase());
    if (!installation) throw new Error(`fake-github: the app is not installed on ${account}`);
    return installation.id;
  }

  /**
   * An installation token minted directly, for clients that skip the JWT exchange
   * (`new Octokit({ baseUrl, auth: token })`). Probot's `auth(installationId)` gets
   * one through POST /app/installations/{id}/access_tokens instead.
   */
  installationToken(account: string): string {
    return this.state.issueToken(this.installationId(account)).token;
  }

  /**
   * The next matching request(s) fail with this status instead of being handled (after
   * validation and auth), to test back-off: e.g. `{ operationId: 'pulls/merge', status: 502 }`
   * or a secondary rate limit `{ status: 403, message: 'You have exceeded a secondary rate
   * limit', headers: { 'retry-after': '1' } }`. With `afterHandling`, the request is carried out first and only its
   * answer lost (a 5xx after the write). Not a violation.
   */
  failNext(failure: InjectedFailure): void {
    this.failures.push({ times: 1, ...failure });
  }

  // ---- reading state ---------------------------------------------------------------

  /** The commit's content: the ordered list of changes applied (see model.ts). */
  treeOf(sha: Sha): readonly string[] {
    return this.state.getCommit(sha).tree;
  }

  treeShaOf(sha: Sha): Sha {
    return treeSha(this.treeOf(sha));
  }

  /** Same content: the same changes applied in the same order, however they were merged. */
  sameContent(a: Sha, b: Sha): boolean {
    return this.treeShaOf(a) === this.treeShaOf(b);
  }

  /** PR numbers whose changes the commit contains, in the order applied (what a test branch tests). */
  pullRequestsIn(sha: Sha): number[] {
    const repo = this.state.repoOfSha(sha);
    const numbers: number[] = [];
    for (const id of this.treeOf(sha)) {
      const key = repo.changes.get(id)?.conflictKey ?? '';
      const n = /^#(\d+)$/.exec(key)?.[1];
      if (n !== undefined && !numbers.includes(Number(n))) numbers.push(Number(n));
    }
    return numbers;
  }

  parentsOf(sha: Sha): Sha[] {
    return [...this.state.getCommit(sha).parents];
  }

  messageOf(sha: Sha): string {
    return this.state.getCommit(sha).message;
  }

  /** Check runs on a commit, oldest first; only those named `name` when given. */
  checkRuns(sha: Sha, name?: string): CheckRunView[] {
    const repo = this.state.repoOfSha(sha);
    return this.state
      .checkRunsOn(repo, sha)
      .filter((r) => name === undefined || r.name === name)
      .map((r) => ({ id: r.id, name: r.name, headSha: r.headSha, status: r.status, conclusion: r.conclusion, output: { ...r.output }, detailsUrl: r.detailsUrl, app: this.state.apps.get(r.appId)?.slug ?? String(r.appId) }));
  }

  statuses(sha: Sha, context?: string): CommitStatus[] {
    const repo = this.state.repoOfSha(sha);
    return this.state.statusesOn(repo, sha).filter((s) => context === undefined || s.context === context);
  }

  /** Requests for one operation (`pulls/merge`, `repos/merge`, `checks/create`, ...). */
  requestsTo(operationId: string): RecordedRequest[] {
    return this.requests.filter((r) => r.operationId === operationId);
  }

  /** Throws a readable error listing the violations, if any. */
  assertNoViolations(): void {
    if (this.violations.length === 0) return;
    throw new Error(`fake-github saw ${this.violations.length} violation(s):\n${this.violations.map((v) => `- [${v.kind}] ${v.method} ${v.path}${v.operationId ? ` (${v.operationId})` : ''}: ${v.message}`).join('\n')}`);
  }

  /** Polls until `predicate` holds (webhook deliveries flow meanwhile); throws after `timeoutMs`. */
  async waitFor(predicate: () => boolean | Promise<boolean>, options: { timeoutMs?: number; intervalMs?: number; message?: string } = {}): Promise<void> {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    for (;;) {
      if (await predicate()) return;
      if (Date.now() > deadline) throw new Error(`fake-github: timed out waiting${options.message ? ` for ${options.message}` : ''}`);
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
    }
  }

  private shapesNow(): Shapes {
    this.shapes ??= new Shapes(this.state, this.baseUrl || 'http://127.0.0.1', this.webOrigin);
    return this.shapes;
  }
}

