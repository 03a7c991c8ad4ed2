import { randomBytes } from 'node:crypto';
import { commitsBetween, conflictPair, isAncestor, mergeTrees, newSha, treeSha } from './git.js';
import { requirementsFor, rulesetApplies, unmetChecks } from './protection.js';
import type {
  App,
  Change,
  CheckRun,
  Commit,
  CommitStatus,
  FakeEvent,
  Installation,
  IssueComment,
  Label,
  Permission,
  PullRequest,
  Repo,
  Sha,
} from './model.js';

/**
 * The fake's whole world and every rule that changes it. Route handlers and test
 * helpers both call these methods, so a PR merged through the API and one merged
 * "outside the queue" by a helper go through the same code and emit the same events.
 * Refusals throw GitHubError with the status and message GitHub answers.
 */

export class GitHubError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';

export interface FakeStateOptions {
  now?: () => Date;
  app: App;
  ciApp: App;
  /** What a user who is neither owner nor listed collaborator gets. */
  defaultPermission: Permission;
  enforceBranchProtection: boolean;
  /** After every push to a branch, its open PRs answer `mergeable: null` to this many reads (GitHub recomputing). */
  mergeableUnknownAfterBasePush: number;
  /** For this long after a push to a branch, merging a PR into it answers 405 "Base branch was modified". */
  baseModifiedWindowMs: number;
  /** For this long after a branch moves, reads of its ref answer the head it had before (a lagging replica). */
  staleRefReadsMs: number;
  /** How long after a push that takes in an open PR's head GitHub marks it merged (and says so); 0: at once. */
  mergedMarkDelayMs?: number;
}

export interface UserRecord {
  id: number;
  login: string;
  type: 'User' | 'Bot' | 'Organization';
}

/** One attempt at delivering an event to the App's webhook, as `GET /app/hook/deliveries` shows it. */
export interface HookAttempt {
  guid: string;
  at: string;
  event: string;
  action: string | null;
  /** The receiver's HTTP status; 0 when it could not be reached. */
  statusCode: number;
  status: string;
  installationId: number | null;
  repositoryId: number | null;
}

/** The App's webhook, as its deliveries API sees it (FakeWebhooks provides it). */
export interface AppHook {
  /** Every attempt, oldest first; an attempt's id is its place in this list, from 1. */
  attempts(): HookAttempt[];
  /** Delivers the event of attempt `guid` again, soon (GitHub answers 202 first). */
  redeliver(guid: string): void;
}

export class FakeState {
  /** The App's webhook deliveries (null until FakeWebhooks exists). */
  appHook: AppHook | null = null;
  /** Merged markings GitHub has still to make (mergedMarkDelayMs): cleared when the fake closes. */
  readonly markings = new Set<NodeJS.Timeout>();
  readonly commits = new Map<Sha, Commit>();
  /** Tree sha to its change list, so POST git/commits can name a tree by sha. */
  readonly trees = new Map<Sha, readonly string[]>();
  readonly repos = new Map<string, Repo>();
  readonly users = new Map<string, UserRecord>();
  readonly apps = new Map<number, App>();
  readonly installations = new Map<number, Installation>();
  readonly tokens = new Map<string, { installationId: number; expiresAt: Date }>();
  readonly checkRuns = new Map<number, CheckRun>();
  readonly statuses: CommitStatus[] = [];
  /** Every event emitted, in order (delivered or not). */
  readonly events: FakeEvent[] = [];
  private listeners: Array<(event: FakeEvent) => void> = [];
  private idCounter = 1000;
  /** When each ref last moved (wall clock), for GitHub's "Base branch was modified" window. */
  private readonly refUpdatedAt = new Map<string, number>();
  /** Each ref's head before its last move: what a lagging replica still answers (options.staleRefReadsMs). */
  private readonly refBefore = new Map<string, Sha | undefined>();
  private checkSuites = new Map<string, number>();

  constructor(readonly options: FakeStateOptions) {
    for (const app of [options.app, options.ciApp]) {
      this.apps.set(app.id, app);
      this.user(app.botLogin, 'Bot');
    }
  }

  // ---- basics ------------------------------------------------------------

  nextId(): number {
    return ++this.idCounter;
  }

  /** GitHub's timestamp format: ISO 8601 in UTC, whole seconds. */
  now(): string {
    return (this.options.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  onEvent(listener: (event: FakeEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  emit(event: FakeEvent): void {
    this.events.push(event);
    for (const listener of this.listeners) listener(event);
  }

  user(login: string, type: UserRecord['type'] = login.endsWith('[bot]') ? 'Bot' : 'User'): UserRecord {
    let u = this.users.get(login.toLowerCase());
    if (!u) {
      u = { id: this.nextId(), login, type };
      this.users.set(login.toLowerCase(), u);
    }
    return u;
  }

  // ---- apps and installations -----------------------------------------------

  install(account: string, installationId?: number): Installation {
    const existing = [...this.installations.values()].find((i) => i.account.toLowerCase() === account.toLowerCase());
    if (existing && (installationId === undefined || existing.id === installationId)) return existing;
    const installation = { id: installationId ?? this.nextId(), account, appId: this.options.app.id };
    this.installations.set(installation.id, installation);
    return installation;
  }

  /** The app uninstalled from an account (its installation and tokens gone). */
  uninstall(account: string): void {
    for (const [id, installation] of this.installations) {
      if (installation.account.toLowerCase() !== account.toLowerCase()) continue;
      this.installations.delete(id);
      for (const [token, issued] of this.tokens) if (issued.installationId === id) this.tokens.delete(token);
    }
  }

  /** The account's owner suspends the app, or lifts the suspension. */
  suspend(account: string, suspended: boolean): void {
    const installation = [...this.installations.values()].find((i) => i.account.toLowerCase() === account.toLowerCase());
    if (!installation) throw new Error(`fake-github: the app is not installed on ${account}`);
    installation.suspendedAt = suspended ? (this.options.now?.() ?? new Date()).toISOString() : null;
  }

  installationFor(repo: Repo): Installation | undefined {
    return [...this.installations.values()].find((i) => i.account.toLowerCase() === repo.owner.toLowerCase());
  }

  issueToken(installationId: number): { token: string; expiresAt: Date } {
    const installation = this.installations.get(installationId);
    if (!installation) throw new GitHubError(404, 'Not Found');
    if (installation.suspendedAt) throw new GitHubError(403, 'This installation has been suspended');
    const token = `ghs_${randomBytes(18).toString('hex')}`;
    const expiresAt = new Date((this.options.now?.() ?? new Date()).getTime() + 3600_000);
    this.tokens.set(token, { installationId, expiresAt });
    return { token, expiresAt };
  }

  // ---- repositories, commits, refs --------------------------------------------

  createRepo(fullName: string, options: { defaultBranch?: string; private?: boolean; freePlan?: boolean; installationId?: number | null; deleteBranchOnMerge?: boolean } = {}): Repo {
    const [owner, name] = fullName.split('/');
    if (!owner || !name) throw new Error(`fake-github: repository names are "owner/name", got "${fullName}"`);
    if (this.repos.has(fullName.toLowerCase())) throw new Error(`fake-github: ${fullName} already exists`);
    this.user(owner, 'Organization');
    const repo: Repo = {
      id: this.nextId(),
      owner,
      name,
      fullName,
      defaultBranch: options.defaultBranch ?? 'main',
      private: options.private ?? true,
      freePlan: options.freePlan ?? false,
      createdAt: this.now(),
      deleteBranchOnMerge: options.deleteBranchOnMerge ?? false,
      allowedMergeMethods: { merge: true, squash: true, rebase: true },
      refs: new Map(),
      changes: new Map(),
      conflicts: new Set(),
      labels: new Map(),
      pulls: new Map(),
      comments: [],
      nextNumber: 1,
      protection: new Map(),
      rulesets: [],
      permissions: new Map(),
    };
    this.repos.set(fullName.toLowerCase(), repo);
    const root = this.commit(repo, { parents: [], tree: [], message: 'Initial commit', author: owner });
    repo.refs.set(`refs/heads/${repo.defaultBranch}`, root.sha);
    if (options.installationId !== null) this.install(owner, options.installationId);
    return repo;
  }

  /**
   * Renames a repository (same owner), as GitHub does: every record of it carries the new name, requests naming the
   * old one still reach it (GitHub redirects them while no other repository takes the name), and a `repository`
   * webhook says `renamed` with the old name.
   */
  renameRepo(fullName: string, newName: string, sender = 'admin', options: { silent?: boolean } = {}): Repo {
    const repo = this.repo(fullName);
    const from = repo.fullName;
    const oldName = repo.name;
    const to = `${repo.owner}/${newName}`;
    if (this.repos.has(to.toLowerCase())) throw new Error(`fake-github: ${to} already exists`);
    repo.name = newName;
    repo.fullName = to;
    this.repos.set(to.toLowerCase(), repo);
    for (const commit of this.commits.values()) if (commit.repo === from) commit.repo = to;
    for (const run of this.checkRuns.values()) if (run.repo === from) run.repo = to;
    for (const status of this.statuses) if (status.repo === from) status.repo = to;
    // `silent`: an App not subscribed to the repository event (registered before it was asked for) hears nothing.
    if (!options.silent) this.emit({ name: 'repository', action: 'renamed', repo: to, from: oldName, sender });
    return repo;
  }

  repo(fullName: string): Repo {
    const repo = this.repos.get(fullName.toLowerCase());
    if (!repo) throw new Error(`fake-github: no repository ${fullName}`);
    return repo;
  }

  findRepo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  repoOfSha(sha: Sha): Repo {
    const commit = this.commits.get(sha);
    if (!commit) throw new Error(`fake-github: no commit ${sha}`);
    return this.repo(commit.repo);
  }

  commit(repo: Repo, fields: { parents: Sha[]; tree: readonly string[]; message: string; author: string }): Commit {
    const commit: Commit = { ...fields, sha: newSha(repo.fullName, fields.parents.join(','), fields.tree.join(','), fields.message), repo: repo.fullName, date: this.now() };
    this.commits.set(commit.sha, commit);
    this.trees.set(treeSha(commit.tree), commit.tree);
    return commit;
  }

  newChange(repo: Repo, conflictKey: string, message: string, id?: string): Change {
    let changeId = id ?? conflictKey;
    for (let i = 2; repo.changes.has(changeId); i++) changeId = `${id ?? conflictKey}.${i}`;
    const change: Change = { id: changeId, conflictKey, message };
    repo.changes.set(changeId, change);
    return change;
  }

  declareConflict(repo: Repo, a: string, b: string): void {
    repo.conflicts.add(conflictPair(a, b));
  }

  /** A sha (full or ≥7-char prefix), `refs/heads/x`, `heads/x`, `tags/x` or a branch name. */
  resolve(repo: Repo, refish: string): Sha | undefined {
    // GitHub reads HEAD as the default branch's head.
    if (refish === 'HEAD') return this.branchHead(repo, repo.defaultBranch);
    for (const candidate of [refish, `refs/${refish}`, `refs/heads/${refish}`, `refs/tags/${refish}`]) {
      const sha = repo.refs.get(candidate);
      if (sha) return sha;
    }
    if (/^[0-9a-f]{7,40}$/.test(refish)) {
      for (const commit of this.commits.values()) if (commit.repo === repo.fullName && commit.sha.startsWith(refish)) return commit.sha;
    }
    return undefined;
  }

  branchHead(repo: Repo, branch: string): Sha | undefined {
    return repo.refs.get(`refs/heads/${branch}`);
  }

  getCommit(sha: Sha): Commit {
    const c = this.commits.get(sha);
    if (!c) throw new Error(`fake-github: no commit ${sha}`);
    return c;
  }

  /**
   * Moves (or creates) a ref and does what GitHub does when a branch moves: push
   * event, `synchronize` for open PRs whose head it is, and PRs whose head is now
   * contained in their base are closed as merged (a fast-forward merge).
   */
  setRef(repo: Repo, ref: string, sha: Sha, sender: string): void {
    const before = repo.refs.get(ref);
    if (before === sha) return;
    repo.refs.set(ref, sha);
    this.refUpdatedAt.set(`${repo.fullName}:${ref}`, Date.now());
    this.refBefore.set(`${repo.fullName}:${ref}`, before);
    const forced = before !== undefined && !isAncestor(this.commits, before, sha);
    if (before === undefined) this.emit({ name: 'create', repo: repo.fullName, ref, sender });
    this.emit({ name: 'push', repo: repo.fullName, ref, before: before ?? '0'.repeat(40), after: sha, created: before === undefined, deleted: false, forced, sender });
    if (!ref.startsWith('refs/heads/')) return;
    const branch = ref.slice('refs/heads/'.length);
    for (const pr of repo.pulls.values()) {
      if (pr.state !== 'open') continue;
      if (pr.headRef === branch && pr.headSha !== sha) {
        const previous = pr.headSha;
        pr.headSha = sha;
        pr.updatedAt = this.now();
        this.emit({ name: 'pull_request', action: 'synchronize', repo: repo.fullName, number: pr.number, sender, extra: { before: previous, after: sha } });
      } else if (pr.baseRef === branch && isAncestor(this.commits, pr.headSha, sha)) {
        const delay = this.options.mergedMarkDelayMs ?? 0;
        if (delay === 0) this.markMerged(repo, pr, sha, sender);
        else {
          // GitHub marks it in the background: meanwhile the PR reads open, not merged, its head in the branch.
          const head = pr.headSha;
          const timer = setTimeout(() => {
            this.markings.delete(timer);
            const now = repo.refs.get(ref);
            if (pr.state === 'open' && pr.headSha === head && now !== undefined && isAncestor(this.commits, head, now)) this.markMerged(repo, pr, sha, sender);
          }, delay);
          timer.unref();
          this.markings.add(timer);
        }
      } else if (pr.baseRef === branch) {
        // GitHub recomputes every open PR's mergeability in the background after a push to its base.
        pr.unknownReads = Math.max(pr.unknownReads, this.options.mergeableUnknownAfterBasePush);
      }
    }
  }

  /** A ref as a read of it answers: its head, or the one before for `staleRefReadsMs` after it moved. */
  readRef(repo: Repo, ref: string): Sha | undefined {
    const key = `${repo.fullName}:${ref}`;
    const moved = this.refUpdatedAt.get(key);
    if (moved !== undefined && Date.now() - moved < this.options.staleRefReadsMs) return this.refBefore.get(key);
    return repo.refs.get(ref);
  }

  /** When the branch last moved (wall-clock ms), or undefined. */
  lastBranchUpdate(repo: Repo, branch: string): number | undefined {
    return this.refUpdatedAt.get(`${repo.fullName}:refs/heads/${branch}`);
  }

  deleteRef(repo: Repo, ref: string, sender: string): void {
    const before = repo.refs.get(ref);
    if (before === undefined) throw new GitHubError(422, 'Reference does not exist');
    repo.refs.delete(ref);
    this.emit({ name: 'delete', repo: repo.fullName, ref, sender });
    this.emit({ name: 'push', repo: repo.fullName, ref, before, after: '0'.repeat(40), created: false, deleted: true, forced: false, sender });
    const branch = ref.replace(/^refs\/heads\//, '');
    for (const pr of repo.pulls.values()) {
      // GitHub closes an open PR whose head branch is deleted.
      if (pr.state === 'open' && pr.headRef === branch) this.closePull(repo, pr.number, sender);
    }
  }

  /** A file's content at a commit: the last change in its tree that wrote it (undefined: no such file). */
  fileAt(repo: Repo, sha: Sha, path: string): string | undefined {
    const tree = this.getCommit(sha).tree;
    for (let i = tree.length - 1; i >= 0; i--) {
      const files = repo.changes.get(tree[i]!)?.files;
      if (files && path in files) return files[path] ?? undefined;
    }
    return undefined;
  }

  /** Files a commit changed against its first parent, as a push payload lists them. */
  filesChangedBy(repo: Repo, sha: Sha): { added: string[]; removed: string[]; modified: string[] } {
    const commit = this.getCommit(sha);
    const parent = commit.parents[0];
    const before = new Set(parent ? this.getCommit(parent).tree : []);
    const paths = new Set<string>();
    for (const id of commit.tree) if (!before.has(id)) for (const path of Object.keys(repo.changes.get(id)?.files ?? {})) paths.add(path);
    const changed = { added: [] as string[], removed: [] as string[], modified: [] as string[] };
    for (const path of paths) {
      const was = parent ? this.fileAt(repo, parent, path) : undefined;
      const now = this.fileAt(repo, sha, path);
      if (now === undefined) {
        if (was !== undefined) changed.removed.push(path);
      } else (was === undefined ? changed.added : changed.modified).push(path);
    }
    return changed;
  }

  /** A new commit on a branch carrying one new change (a push from outside the queue). */
  pushChange(repo: Repo, branch: string, options: { change?: string; conflictKey?: string; message?: string; author?: string; files?: Record<string, string | null> } = {}): Sha {
    const parent = this.branchHead(repo, branch);
    const parentTree = parent ? this.getCommit(parent).tree : [];
    const key = options.conflictKey ?? options.change ?? `push-${this.nextId()}`;
    const message = options.message ?? `Change ${options.change ?? key}`;
    const change = this.newChange(repo, key, message, options.change);
    if (options.files) change.files = { ...options.files };
    const author = options.author ?? repo.owner;
    const commit = this.commit(repo, { parents: parent ? [parent] : [], tree: [...parentTree, change.id], message, author });
    this.setRef(repo, `refs/heads/${branch}`, commit.sha, author);
    return commit.sha;
  }

  // ---- pull requests ----------------------------------------------------------------

  pull(repo: Repo, number: number): PullRequest {
    const pr = repo.pulls.get(number);
    if (!pr) throw new GitHubError(404, 'Not Found');
    return pr;
  }

  openPull(
    repo: Repo,
    options: { title?: string; body?: string | null; user?: string; head?: string; base?: string; draft?: boolean; labels?: string[]; commits?: number; fromFork?: boolean },
  ): PullRequest {
    const number = repo.nextNumber++;
    const base = options.base ?? repo.defaultBranch;
    const baseSha = this.branchHead(repo, base);
    if (!baseSha) throw new GitHubError(422, `Validation Failed: base branch ${base} does not exist`, { errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }] });
    const user = options.user ?? 'octocat';
    this.user(user);
    const headRef = options.head ?? `feature-${number}`;
    let headSha = this.branchHead(repo, headRef);
    if (!headSha) {
      // A branch with this PR's own changes, named so conflicts can be declared by PR number.
      let sha = baseSha;
      for (let k = 1; k <= (options.commits ?? 1); k++) sha = this.commitPrChange(repo, number, sha, user, k);
      this.setRef(repo, `refs/heads/${headRef}`, sha, user);
      headSha = sha;
    } else {
      const exists = [...repo.pulls.values()].some((p) => p.state === 'open' && p.headRef === headRef && p.baseRef === base);
      if (exists) throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${headRef}.` }] });
      if (isAncestor(this.commits, headSha, baseSha)) {
        throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'custom', message: `No commits between ${base} and ${headRef}` }] });
      }
    }
    const now = this.now();
    const pr: PullRequest = {
      id: this.nextId(),
      number,
      title: options.title ?? `PR ${number}`,
      body: options.body === undefined ? null : options.body,
      user,
      headRef,
      headSha,
      baseRef: base,
      state: 'open',
      draft: options.draft ?? false,
      merged: false,
      mergedAt: null,
      mergedBy: null,
      mergeCommitSha: null,
      closedAt: null,
      createdAt: now,
      updatedAt: now,
      labels: [],
      labelEvents: [],
      reviews: [],
      unknownReads: 0,
      pushes: options.commits ?? 1,
      fromFork: options.fromFork ?? false,
    };
    repo.pulls.set(number, pr);
    this.emit({ name: 'pull_request', action: 'opened', repo: repo.fullName, number, sender: user });
    if (options.labels?.length) this.addLabels(repo, number, options.labels, user);
    return pr;
  }

  private commitPrChange(repo: Repo, number: number, parent: Sha, author: string, k: number): Sha {
    const change = this.newChange(repo, `#${number}`, `PR #${number} change ${k}`, `#${number}.${k}`);
    const parentTree = this.getCommit(parent).tree;
    return this.commit(repo, { parents: [parent], tree: [...parentTree, change.id], message: change.message, author }).sha;
  }

  /** A new commit on the PR's head branch; `rebase`: on top of the current base instead (a force push). */
  pushToPull(repo: Repo, number: number, options: { rebase?: boolean; sender?: string } = {}): Sha {
    const pr = this.pull(repo, number);
    const sender = options.sender ?? pr.user;
    pr.pushes += 1;
    let parent = pr.headSha;
    if (options.rebase) {
      const baseSha = this.branchHead(repo, pr.baseRef)!;
      const merged = mergeTrees(repo, this.getCommit(baseSha).tree, this.getCommit(pr.headSha).tree);
      if (!merged.ok) throw new Error(`fake-github: PR #${number} does not rebase cleanly (${merged.conflict.join(' vs ')})`);
      parent = this.commit(repo, { parents: [baseSha], tree: merged.tree, message: `Rebase #${number}`, author: sender }).sha;
    }
    const sha = this.commitPrChange(repo, number, parent, sender, pr.pushes);
    this.setRef(repo, `refs/heads/${pr.headRef}`, sha, sender);
    return sha;
  }

  /** `mergeable` and `mergeable_state` as GitHub would compute them now. */
  mergeability(repo: Repo, pr: PullRequest): { mergeable: boolean | null; mergeableState: string } {
    if (pr.mergeableOverride) return pr.mergeableOverride;
    if (pr.state === 'closed') return { mergeable: null, mergeableState: 'unknown' };
    const baseSha = this.branchHead(repo, pr.baseRef);
    if (!baseSha) return { mergeable: null, mergeableState: 'unknown' };
    if (!mergeTrees(repo, this.getCommit(baseSha).tree, this.getCommit(pr.headSha).tree).ok) return { mergeable: false, mergeableState: 'dirty' };
    if (pr.draft) return { mergeable: true, mergeableState: 'draft' };
    const requirements = requirementsFor(repo, pr.baseRef);
    if (unmetChecks(this, repo, pr.headSha, requirements) || this.approvals(repo, pr) < requirements.approvals) return { mergeable: true, mergeableState: 'blocked' };
    if (requirements.strict && !isAncestor(this.commits, baseSha, pr.headSha)) return { mergeable: true, mergeableState: 'behind' };
    const failing = this.checkRunsOn(repo, pr.headSha).some((r) => r.status === 'completed' && !['success', 'neutral', 'skipped'].includes(r.conclusion ?? ''));
    return { mergeable: true, mergeableState: failing ? 'unstable' : 'clean' };
  }

  /** Approvals that count: each reviewer's latest verdict, from users with write access. */
  approvals(repo: Repo, pr: PullRequest): number {
    const latest = new Map<string, string>();
    for (const review of pr.reviews) if (review.state !== 'COMMENTED') latest.set(review.user, review.state);
    return [...latest.entries()].filter(([user, s]) => s === 'APPROVED' && ['admin', 'maintain', 'write'].includes(this.permission(repo, user))).length;
  }

  /** PUT pulls/{n}/merge, and the "merge button" test helper. */
  mergePull(
    repo: Repo,
    number: number,
    options: { method?: MergeMethod; title?: string; message?: string; sha?: string },
    sender: string,
  ): { sha: Sha } {
    const pr = this.pull(repo, number);
    if (pr.state !== 'open') throw new GitHubError(405, 'Pull Request is not mergeable');
    if (options.sha !== undefined && options.sha !== pr.headSha) throw new GitHubError(409, 'Head branch was modified. Review and try the merge again.');
    if (pr.draft) throw new GitHubError(405, 'Pull Request is still a draft');
    const baseSha = this.branchHead(repo, pr.baseRef);
    if (!baseSha) throw new GitHubError(405, 'Base branch does not exist');
    const result = mergeTrees(repo, this.getCommit(baseSha).tree, this.getCommit(pr.headSha).tree);
    if (!result.ok || pr.mergeableOverride?.mergeable === false) throw new GitHubError(405, 'Pull Request is not mergeable');
    const method = options.method ?? 'merge';
    const requirements = requirementsFor(repo, pr.baseRef);
    if (!repo.allowedMergeMethods[method]) throw new GitHubError(405, `${method === 'merge' ? 'Merge commits are' : method === 'squash' ? 'Squash merges are' : 'Rebase merges are'} not allowed on this repository.`);
    if (this.options.enforceBranchProtection) {
      if (requirements.allowedMergeMethods && !requirements.allowedMergeMethods.includes(method)) throw new GitHubError(405, `Merge method ${method} is not allowed on this repository`);
      const unmet = unmetChecks(this, repo, pr.headSha, requirements);
      if (unmet) throw new GitHubError(405, unmet);
      if (this.approvals(repo, pr) < requirements.approvals) throw new GitHubError(405, `At least ${requirements.approvals} approving review is required by reviewers with write access.`);
      if (requirements.strict && !isAncestor(this.commits, baseSha, pr.headSha)) throw new GitHubError(405, 'Head branch is out of date. Review and try the merge again.');
    }
    let newHead: Sha;
    if (method === 'rebase') {
      newHead = baseSha;
      for (const id of result.added) {
        const parentTree = this.getCommit(newHead).tree;
        newHead = this.commit(repo, { parents: [newHead], tree: [...parentTree, id], message: repo.changes.get(id)?.message ?? id, author: pr.user }).sha;
      }
    } else {
      const title = options.title ?? (method === 'squash' ? `${pr.title} (#${number})` : `Merge pull request #${number} from ${repo.owner}/${pr.headRef}`);
      const defaultBody =
        method === 'squash'
          ? commitsBetween(this.commits, baseSha, pr.headSha)
              .map((c) => `* ${c.message}`)
              .join('\n')
          : pr.title;
      const message = `${title}\n\n${options.message ?? defaultBody}`.trimEnd();
      newHead = this.commit(repo, { parents: method === 'squash' ? [baseSha] : [baseSha, pr.headSha], tree: result.tree, message, author: sender }).sha;
    }
    this.markMerged(repo, pr, newHead, sender);
    this.setRef(repo, `refs/heads/${pr.baseRef}`, newHead, sender);
    if (repo.deleteBranchOnMerge && repo.refs.has(`refs/heads/${pr.headRef}`)) this.deleteRef(repo, `refs/heads/${pr.headRef}`, sender);
    return { sha: newHead };
  }

  private markMerged(repo: Repo, pr: PullRequest, mergeCommitSha: Sha, sender: string): void {
    const now = this.now();
    Object.assign(pr, { state: 'closed', merged: true, mergedAt: now, closedAt: now, updatedAt: now, mergedBy: sender, mergeCommitSha });
    this.emit({ name: 'pull_request', action: 'closed', repo: repo.fullName, number: pr.number, sender });
  }

  closePull(repo: Repo, number: number, sender: string): void {
    const pr = this.pull(repo, number);
    if (pr.state === 'closed') return;
    Object.assign(pr, { state: 'closed', closedAt: this.now(), updatedAt: this.now() });
    this.emit({ name: 'pull_request', action: 'closed', repo: repo.fullName, number, sender });
  }

  reopenPull(repo: Repo, number: number, sender: string): void {
    const pr = this.pull(repo, number);
    if (pr.state === 'open') return;
    if (pr.merged) throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', code: 'custom', message: 'Cannot reopen a merged pull request' }] });
    Object.assign(pr, { state: 'open', closedAt: null, updatedAt: this.now() });
    this.emit({ name: 'pull_request', action: 'reopened', repo: repo.fullName, number, sender });
  }

  editPull(repo: Repo, number: number, changes: { title?: string; body?: string | null; base?: string }, sender: string): void {
    const pr = this.pull(repo, number);
    const from: Record<string, unknown> = {};
    if (changes.title !== undefined && changes.title !== pr.title) {
      from.title = { from: pr.title };
      pr.title = changes.title;
    }
    if (changes.body !== undefined && changes.body !== pr.body) {
      from.body = { from: pr.body ?? '' };
      pr.body = changes.body;
    }
    if (changes.base !== undefined && changes.base !== pr.baseRef) {
      if (!this.branchHead(repo, changes.base)) throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }] });
      from.base = { ref: { from: pr.baseRef }, sha: { from: this.branchHead(repo, pr.baseRef) ?? '' } };
      pr.baseRef = changes.base;
    }
    if (Object.keys(from).length === 0) return;
    pr.updatedAt = this.now();
    this.emit({ name: 'pull_request', action: 'edited', repo: repo.fullName, number, sender, extra: { changes: from } });
  }

  setDraft(repo: Repo, number: number, draft: boolean, sender: string): void {
    const pr = this.pull(repo, number);
    if (pr.draft === draft) return;
    pr.draft = draft;
    pr.updatedAt = this.now();
    this.emit({ name: 'pull_request', action: draft ? 'converted_to_draft' : 'ready_for_review', repo: repo.fullName, number, sender });
  }

  review(repo: Repo, number: number, user: string, state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED'): number {
    const pr = this.pull(repo, number);
    this.user(user);
    const id = this.nextId();
    pr.reviews.push({ id, user, state, commitId: pr.headSha, submittedAt: this.now() });
    this.emit({ name: 'pull_request_review', action: 'submitted', repo: repo.fullName, number, reviewId: id, sender: user });
    return id;
  }

  // ---- labels and comments ---------------------------------------------------------

  label(repo: Repo, name: string): Label {
    let label = [...repo.labels.values()].find((l) => l.name.toLowerCase() === name.toLowerCase());
    if (!label) {
      // GitHub sends null for "no description", but its description of PR lists
      // (pull-request-simple) types the field as a plain string: '' satisfies both.
      label = { id: this.nextId(), name, color: 'ededed', description: '' };
      repo.labels.set(name, label);
    }
    return label;
  }

  addLabels(repo: Repo, number: number, names: string[], sender: string): void {
    const pr = this.pull(repo, number);
    for (const name of names) {
      const label = this.label(repo, name);
      if (pr.labels.some((l) => l.toLowerCase() === label.name.toLowerCase())) continue;
      pr.labels.push(label.name);
      pr.updatedAt = this.now();
      pr.labelEvents.push({ id: this.nextId(), event: 'labeled', label: label.name, actor: sender, createdAt: pr.updatedAt });
      this.emit({ name: 'pull_request', action: 'labeled', repo: repo.fullName, number, sender, extra: { label: label.name } });
    }
  }

  removeLabel(repo: Repo, number: number, name: string, sender: string): void {
    const pr = this.pull(repo, number);
    const index = pr.labels.findIndex((l) => l.toLowerCase() === name.toLowerCase());
    if (index < 0) throw new GitHubError(404, 'Label does not exist');
    const [removed] = pr.labels.splice(index, 1);
    pr.updatedAt = this.now();
    pr.labelEvents.push({ id: this.nextId(), event: 'unlabeled', label: removed as string, actor: sender, createdAt: pr.updatedAt });
    this.emit({ name: 'pull_request', action: 'unlabeled', repo: repo.fullName, number, sender, extra: { label: removed } });
  }

  addComment(repo: Repo, number: number, body: string, user: string): IssueComment {
    this.pull(repo, number);
    this.user(user);
    const now = this.now();
    const comment = { id: this.nextId(), issueNumber: number, body, user, createdAt: now, updatedAt: now };
    repo.comments.push(comment);
    this.emit({ name: 'issue_comment', action: 'created', repo: repo.fullName, number, commentId: comment.id, sender: user });
    return comment;
  }

  permission(repo: Repo, login: string): Permission {
    if (login.toLowerCase() === repo.owner.toLowerCase()) return 'admin';
    return repo.permissions.get(login.toLowerCase()) ?? this.options.defaultPermission;
  }

  // ---- checks and statuses ---------------------------------------------------------

  checkRunsOn(repo: Repo, sha: Sha): CheckRun[] {
    return [...this.checkRuns.values()].filter((r) => r.repo === repo.fullName && r.headSha === sha);
  }

  statusesOn(repo: Repo, sha: Sha): CommitStatus[] {
    return this.statuses.filter((s) => s.repo === repo.fullName && s.sha === sha);
  }

  createCheckRun(
    repo: Repo,
    appId: number,
    fields: Partial<Omit<CheckRun, 'id' | 'repo' | 'appId' | 'checkSuiteId'>> & { name: string; headSha: Sha },
    sender: string,
  ): CheckRun {
    if (!this.commits.has(fields.headSha) || this.getCommit(fields.headSha).repo !== repo.fullName) {
      throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'invalid', field: 'head_sha', message: `No commit found for SHA: ${fields.headSha}` }] });
    }
    const suiteKey = `${repo.fullName}\u0000${fields.headSha}\u0000${appId}`;
    let checkSuiteId = this.checkSuites.get(suiteKey);
    if (checkSuiteId === undefined) {
      checkSuiteId = this.nextId();
      this.checkSuites.set(suiteKey, checkSuiteId);
    }
    const status = fields.conclusion ? 'completed' : (fields.status ?? 'queued');
    if (status === 'completed' && !fields.conclusion) throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'missing_field', field: 'conclusion' }] });
    const now = this.now();
    const run: CheckRun = {
      id: this.nextId(),
      repo: repo.fullName,
      headSha: fields.headSha,
      name: fields.name,
      status,
      conclusion: fields.conclusion ?? null,
      startedAt: fields.startedAt ?? now,
      completedAt: status === 'completed' ? (fields.completedAt ?? now) : null,
      detailsUrl: fields.detailsUrl ?? null,
      externalId: fields.externalId ?? null,
      output: fields.output ?? { title: null, summary: null, text: null },
      appId,
      checkSuiteId,
    };
    this.checkRuns.set(run.id, run);
    this.emit({ name: 'check_run', action: 'created', repo: repo.fullName, id: run.id, sender });
    if (run.status === 'completed') this.checkRunCompleted(run, sender);
    return run;
  }

  updateCheckRun(run: CheckRun, fields: Partial<Omit<CheckRun, 'id' | 'repo' | 'appId' | 'checkSuiteId' | 'headSha'>>, sender: string): CheckRun {
    const wasCompleted = run.status === 'completed';
    const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    Object.assign(run, defined);
    if (fields.conclusion) run.status = 'completed';
    if (run.status === 'completed' && !run.conclusion) throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'CheckRun', code: 'missing_field', field: 'conclusion' }] });
    if (run.status === 'completed') run.completedAt ??= this.now();
    if (run.status === 'completed' && !wasCompleted) this.checkRunCompleted(run, sender);
    return run;
  }

  private checkRunCompleted(run: CheckRun, sender: string): void {
    this.emit({ name: 'check_run', action: 'completed', repo: run.repo, id: run.id, sender });
    const suite = [...this.checkRuns.values()].filter((r) => r.checkSuiteId === run.checkSuiteId);
    if (suite.every((r) => r.status === 'completed')) {
      this.emit({ name: 'check_suite', action: 'completed', repo: run.repo, checkSuiteId: run.checkSuiteId, headSha: run.headSha, appId: run.appId, sender });
    }
  }

  checkSuiteConclusion(checkSuiteId: number): { status: string; conclusion: string | null } {
    const runs = [...this.checkRuns.values()].filter((r) => r.checkSuiteId === checkSuiteId);
    if (runs.some((r) => r.status !== 'completed')) return { status: 'in_progress', conclusion: null };
    const order = ['action_required', 'cancelled', 'timed_out', 'failure', 'neutral', 'skipped', 'success'];
    const worst = runs.map((r) => r.conclusion ?? 'success').sort((a, b) => order.indexOf(a) - order.indexOf(b))[0];
    return { status: 'completed', conclusion: worst ?? 'success' };
  }

  createStatus(repo: Repo, sha: Sha, fields: { state: CommitStatus['state']; context?: string; description?: string | null; targetUrl?: string | null }, creator: string): CommitStatus {
    if (!this.commits.has(sha) || this.getCommit(sha).repo !== repo.fullName) {
      throw new GitHubError(422, 'Validation Failed', { errors: [{ resource: 'Status', code: 'custom', field: 'sha', message: `No commit found for SHA: ${sha}` }] });
    }
    this.user(creator);
    const status: CommitStatus = {
      id: this.nextId(),
      repo: repo.fullName,
      sha,
      state: fields.state,
      context: fields.context ?? 'default',
      description: fields.description ?? null,
      targetUrl: fields.targetUrl ?? null,
      creator,
      createdAt: this.now(),
    };
    this.statuses.push(status);
    this.emit({ name: 'status', repo: repo.fullName, id: status.id, sender: creator });
    return status;
  }

  /** The combined status: latest per context; failure wins, then pending; none at all is pending. */
  combinedStatus(repo: Repo, sha: Sha): { state: 'failure' | 'pending' | 'success'; statuses: CommitStatus[] } {
    const latest = new Map<string, CommitStatus>();
    for (const s of this.statusesOn(repo, sha)) latest.set(s.context, s);
    const statuses = [...latest.values()];
    const state = statuses.some((s) => s.state === 'failure' || s.state === 'error')
      ? 'failure'
      : statuses.length === 0 || statuses.some((s) => s.state === 'pending')
        ? 'pending'
        : 'success';
    return { state, statuses };
  }

  // ---- the merges API and ref updates with branch protection ---------------------------

  /** POST /repos/{o}/{r}/merges: a merge commit on `base`, or null when `head` is already contained. */
  mergeIntoBranch(repo: Repo, base: string, head: string, message: string | undefined, sender: string): Commit | null {
    const baseSha = this.branchHead(repo, base);
    if (!baseSha) throw new GitHubError(404, 'Base does not exist');
    const headSha = this.resolve(repo, head);
    if (!headSha) throw new GitHubError(404, 'Head does not exist');
    if (isAncestor(this.commits, headSha, baseSha)) return null;
    const result = mergeTrees(repo, this.getCommit(baseSha).tree, this.getCommit(headSha).tree);
    if (!result.ok) throw new GitHubError(409, 'Merge Conflict');
    const commit = this.commit(repo, { parents: [baseSha, headSha], tree: result.tree, message: message ?? `Merge ${head} into ${base}`, author: sender });
    this.guardProtectedUpdate(repo, base, commit.sha, false, sender, 409);
    this.setRef(repo, `refs/heads/${base}`, commit.sha, sender);
    return commit;
  }

  /**
   * What an active ruleset on the branch refuses, as GitHub words it: `creation` (only
   * bypass actors may create matching branches), `non_fast_forward` (no force pushes).
   */
  guardRulesets(repo: Repo, branch: string, rule: 'creation' | 'non_fast_forward', actor: string): void {
    if (!this.options.enforceBranchProtection) return;
    const refused = repo.rulesets.some((rs) => rulesetApplies(repo, rs, branch) && rs.rules.some((r) => r.type === rule) && !rs.bypassLogins.includes(actor));
    if (!refused) return;
    const why = rule === 'creation' ? 'Cannot create ref due to creations being restricted.' : 'Cannot force-push to this branch';
    throw new GitHubError(422, `Repository rule violations found\n\n${why}\n\n`);
  }

  /** What a protected branch refuses (force pushes, commits lacking required checks). */
  guardProtectedUpdate(repo: Repo, branch: string, sha: Sha, forced: boolean, actor: string, status = 422): void {
    if (!this.options.enforceBranchProtection) return;
    const protection = repo.protection.get(branch);
    const requirements = requirementsFor(repo, branch);
    if (!protection && requirements.sources.length === 0 && !requirements.pullRequestRequired) return;
    if (forced && protection && !protection.allowForcePushes) throw new GitHubError(status, 'Cannot force-push to this branch');
    // "Require a pull request before merging": a push lands only for those allowed to bypass it.
    if (requirements.pullRequestRequired && !requirements.bypassPullRequests.includes(actor)) {
      throw new GitHubError(status, `Protected branch update failed for refs/heads/${branch}: Changes must be made through a pull request.`);
    }
    if (protection?.pushAllowances && !protection.pushAllowances.includes(actor)) {
      throw new GitHubError(status, `Protected branch update failed for refs/heads/${branch}: You're not authorized to push to this branch.`);
    }
    const before = this.branchHead(repo, branch);
    if (requirements.linearHistory && before && commitsBetween(this.commits, before, sha).some((c) => c.parents.length > 1)) {
      throw new GitHubError(status, `Protected branch update failed for refs/heads/${branch}: This branch must not contain merge commits.`);
    }
    const unmet = unmetChecks(this, repo, sha, requirements);
    if (unmet) throw new GitHubError(status, `Protected branch update failed for refs/heads/${branch}: ${unmet}`);
  }
}
