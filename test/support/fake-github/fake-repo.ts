import type { FakeGitHub } from './index.js';
import type { Permission, RequiredCheck, RulesetRule, Sha } from './model.js';
import type { MergeMethod } from './state.js';

/** Test helpers for one repository: set up branches, PRs, protection; read PRs back. */

/** A read-only view of a PR for assertions. */
export interface PullRequestView {
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: 'open' | 'closed';
  draft: boolean;
  merged: boolean;
  mergedBy: string | null;
  mergeCommitSha: Sha | null;
  headRef: string;
  headSha: Sha;
  baseRef: string;
  labels: string[];
  mergeable: boolean | null;
  mergeableState: string;
}

export interface CommentView {
  id: number;
  body: string;
  user: string;
}

export interface ProtectionOptions {
  /** Context names, or `{ context, appId }` to require a check run from one app. */
  requiredChecks?: Array<string | RequiredCheck>;
  strict?: boolean;
  requiredApprovals?: number;
  /** Logins (an App's `<slug>[bot]`) allowed to push without a pull request. */
  bypassPullRequests?: string[];
  allowForcePushes?: boolean;
  requiredLinearHistory?: boolean;
  /** "Restrict who can push": only these logins may. */
  pushAllowances?: string[];
}

export interface RulesetOptions {
  name?: string;
  /** `~DEFAULT_BRANCH` (default), `~ALL`, or `refs/heads/<pattern>`. */
  include?: string[];
  exclude?: string[];
  enforcement?: 'active' | 'evaluate' | 'disabled';
  requiredChecks?: Array<string | { context: string; integrationId?: number }>;
  strict?: boolean;
  requiredApprovals?: number;
  allowedMergeMethods?: MergeMethod[];
  /** Further rules in GitHub's own shape. */
  rules?: RulesetRule[];
  /** Logins allowed to push without a pull request (the ruleset's bypass actors). */
  bypassLogins?: string[];
}

/** Test helpers for one repository. `sender`/`user` default to the PR author or the owner. */
export class FakeRepo {
  constructor(
    private readonly fake: FakeGitHub,
    readonly fullName: string,
  ) {}

  private get r() {
    return this.fake.state.repo(this.fullName);
  }

  get defaultBranch(): string {
    return this.r.defaultBranch;
  }

  get installationId(): number {
    return this.fake.installationId(this.r.owner);
  }

  /** The branch's head sha, or undefined when it does not exist. */
  branch(name: string): Sha | undefined {
    return this.fake.state.branchHead(this.r, name);
  }

  branches(): string[] {
    return [...this.r.refs.keys()].filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length));
  }

  createBranch(name: string, from: string = this.r.defaultBranch): Sha {
    const sha = this.fake.state.resolve(this.r, from);
    if (!sha) throw new Error(`fake-github: ${from} does not exist in ${this.fullName}`);
    if (this.branch(name)) throw new Error(`fake-github: branch ${name} already exists`);
    this.fake.state.setRef(this.r, `refs/heads/${name}`, sha, this.r.owner);
    return sha;
  }

  /**
   * A push from outside the queue: one new commit with one new change. `change` names
   * it (and is its conflict key unless `conflictKey` is given), so `declareConflict`
   * can make it clash with a PR. `files` writes files (null deletes one), which the
   * contents API serves and push payloads list.
   */
  push(branch: string, options: { change?: string; conflictKey?: string; message?: string; author?: string; files?: Record<string, string | null> } = {}): Sha {
    return this.fake.state.pushChange(this.r, branch, options);
  }

  /**
   * Someone with push rights moves the branch to an existing commit, e.g. back to an earlier head (a rollback by
   * force-push): the push event says `forced` when the branch loses commits. Protection is not consulted (an admin).
   */
  resetBranch(branch: string, sha: Sha, sender: string = this.r.owner): void {
    this.fake.state.getCommit(sha);
    this.fake.state.setRef(this.r, `refs/heads/${branch}`, sha, sender);
  }

  /** Opens a PR; without an existing `head` branch, one is made from the base with `commits` (1) new changes. Returns its number. */
  openPullRequest(options: { title?: string; body?: string | null; user?: string; head?: string; base?: string; draft?: boolean; labels?: string[]; commits?: number; fromFork?: boolean } = {}): number {
    return this.fake.state.openPull(this.r, options).number;
  }

  pullRequest(number: number): PullRequestView {
    const pr = this.fake.state.pull(this.r, number);
    const m = this.fake.state.mergeability(this.r, pr);
    return {
      number: pr.number,
      title: pr.title,
      body: pr.body,
      user: pr.user,
      state: pr.state,
      draft: pr.draft,
      merged: pr.merged,
      mergedBy: pr.mergedBy,
      mergeCommitSha: pr.mergeCommitSha,
      headRef: pr.headRef,
      headSha: pr.headSha,
      baseRef: pr.baseRef,
      labels: [...pr.labels],
      mergeable: m.mergeable,
      mergeableState: m.mergeableState,
    };
  }

  /** A new commit on the PR's head (`synchronize`); `rebase: true` rebuilds it on the current base first. */
  pushToPullRequest(number: number, options: { rebase?: boolean; sender?: string } = {}): Sha {
    return this.fake.state.pushToPull(this.r, number, options);
  }

  /** Merges as a person would in the UI ("merged outside the queue"); same rules as the API. */
  mergePullRequest(number: number, options: { method?: MergeMethod; title?: string; message?: string; sender?: string } = {}): Sha {
    const pr = this.fake.state.pull(this.r, number);
    return this.fake.state.mergePull(this.r, number, options, options.sender ?? pr.user).sha;
  }

  closePullRequest(number: number, sender?: string): void {
    this.fake.state.closePull(this.r, number, sender ?? this.author(number));
  }

  reopenPullRequest(number: number, sender?: string): void {
    this.fake.state.reopenPull(this.r, number, sender ?? this.author(number));
  }

  /** Draft conversion is GraphQL-only on GitHub: here it is a helper, with its webhook. */
  convertToDraft(number: number, sender?: string): void {
    this.fake.state.setDraft(this.r, number, true, sender ?? this.author(number));
  }

  markReadyForReview(number: number, sender?: string): void {
    this.fake.state.setDraft(this.r, number, false, sender ?? this.author(number));
  }

  editPullRequest(number: number, changes: { title?: string; body?: string | null; base?: string }, sender?: string): void {
    this.fake.state.editPull(this.r, number, changes, sender ?? this.author(number));
  }

  addLabel(number: number, name: string, sender?: string): void {
    this.fake.state.addLabels(this.r, number, [name], sender ?? this.author(number));
  }

  removeLabel(number: number, name: string, sender?: string): void {
    this.fake.state.removeLabel(this.r, number, name, sender ?? this.author(number));
  }

  /** A comment by `user` (a `/mq ...` command, say). Returns its id. */
  comment(number: number, body: string, user: string): number {
    return this.fake.state.addComment(this.r, number, body, user).id;
  }

  comments(number: number): CommentView[] {
    return this.r.comments.filter((c) => c.issueNumber === number).map((c) => ({ id: c.id, body: c.body, user: c.user }));
  }

  approve(number: number, user: string): void {
    this.fake.state.review(this.r, number, user, 'APPROVED');
  }

  /** Makes two PRs (by number) or pushed changes (by name) conflict with each other. */
  declareConflict(a: number | string, b: number | string): void {
    const key = (x: number | string) => (typeof x === 'number' ? `#${x}` : x);
    this.fake.state.declareConflict(this.r, key(a), key(b));
  }

  /** Forces what GitHub reports (`null`: still computing); `undefined` returns to computed. */
  setMergeable(number: number, mergeable: boolean | null | undefined, mergeableState?: string): void {
    const pr = this.fake.state.pull(this.r, number);
    pr.mergeableOverride = mergeable === undefined ? undefined : { mergeable, mergeableState: mergeableState ?? (mergeable === null ? 'unknown' : mergeable ? 'clean' : 'dirty') };
  }

  /** What GitHub answers for `rebaseable` (undefined: the same as `mergeable`). */
  setRebaseable(number: number, rebaseable: boolean | undefined): void {
    this.fake.state.pull(this.r, number).rebaseableOverride = rebaseable;
  }

  /** The next `reads` GETs of the PR answer `mergeable: null`, as while GitHub computes it. */
  mergeableUnknownFor(number: number, reads: number): void {
    this.fake.state.pull(this.r, number).unknownReads = reads;
  }

  protectBranch(branch: string, options: ProtectionOptions = {}): void {
    const checks = (options.requiredChecks ?? []).map((c) => (typeof c === 'string' ? { context: c, appId: null } : c));
    this.r.protection.set(branch, {
      requiredStatusChecks: options.requiredChecks ? { strict: options.strict ?? false, checks } : undefined,
      requiredApprovingReviewCount: options.requiredApprovals,
      bypassPullRequests: options.bypassPullRequests,
      allowForcePushes: options.allowForcePushes,
      requiredLinearHistory: options.requiredLinearHistory,
      pushAllowances: options.pushAllowances,
    });
  }

  /** The repository's merge button settings; unnamed methods keep theirs. */
  allowMergeMethods(methods: Partial<{ merge: boolean; squash: boolean; rebase: boolean }>): void {
    Object.assign(this.r.allowedMergeMethods, methods);
  }

  unprotectBranch(branch: string): void {
    this.r.protection.delete(branch);
  }

  /** Adds a ruleset; returns its id. */
  addRuleset(options: RulesetOptions): number {
    const rules: RulesetRule[] = [...(options.rules ?? [])];
    if (options.requiredChecks) {
      rules.push({
        type: 'required_status_checks',
        parameters: {
          strict_required_status_checks_policy: options.strict ?? false,
          required_status_checks: options.requiredChecks.map((c) => (typeof c === 'string' ? { context: c } : { context: c.context, ...(c.integrationId !== undefined ? { integration_id: c.integrationId } : {}) })),
        },
      });
    }
    if (options.requiredApprovals !== undefined || options.allowedMergeMethods) {
      rules.push({
        type: 'pull_request',
        parameters: {
          required_approving_review_count: options.requiredApprovals ?? 0,
          dismiss_stale_reviews_on_push: false,
          require_code_owner_review: false,
          require_last_push_approval: false,
          required_review_thread_resolution: false,
          ...(options.allowedMergeMethods ? { allowed_merge_methods: options.allowedMergeMethods } : {}),
        },
      });
    }
    const id = this.fake.state.nextId();
    this.r.rulesets.push({ id, name: options.name ?? `ruleset-${id}`, enforcement: options.enforcement ?? 'active', include: options.include ?? ['~DEFAULT_BRANCH'], exclude: options.exclude ?? [], rules, bypassLogins: options.bypassLogins ?? [] });
    return id;
  }

  setPermission(user: string, permission: Permission): void {
    this.fake.state.user(user);
    this.r.permissions.set(user.toLowerCase(), permission);
  }

  private author(number: number): string {
    return this.fake.state.pull(this.r, number).user;
  }
}
