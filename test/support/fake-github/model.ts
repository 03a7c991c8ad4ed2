/**
 * The fake's in-memory state, as plain records. Only fields with behaviour live
 * here; everything else in GitHub's JSON is derived in shapes.ts or filled from the
 * schema (conform.ts).
 */

export type Sha = string;

/**
 * One unit of content. A commit's tree is the ordered list of change ids applied
 * since the repository's first commit, so two commits have the same content exactly
 * when the same changes were applied in the same order, however they got there
 * (merge commit, squash, rebase, merges API, a fast-forward).
 */
export interface Change {
  id: string;
  /** Conflicts are declared between keys: `#<n>` for PR n's pushes, or a push's own name. */
  conflictKey: string;
  /** The message of the commit that introduced it (rebase merges replay it). */
  message: string;
  /** Files it writes (null: deletes), for the contents API; most changes write none. */
  files?: Readonly<Record<string, string | null>>;
}

export interface Commit {
  sha: Sha;
  repo: string;
  parents: Sha[];
  tree: readonly string[];
  message: string;
  author: string;
  date: string;
}

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface RequiredCheck {
  context: string;
  /** Only a check run from this app (or a status, when null) satisfies it. */
  appId?: number | null;
}

export interface BranchProtection {
  requiredStatusChecks?: { strict: boolean; checks: RequiredCheck[] };
  /** Set: "Require a pull request before merging" is on (direct pushes are refused). */
  requiredApprovingReviewCount?: number;
  /** Logins (an App's `<slug>[bot]`) that may bypass the pull request requirement. */
  bypassPullRequests?: string[];
  allowForcePushes?: boolean;
  /** "Require linear history": no merge commits may land. */
  requiredLinearHistory?: boolean;
  /** "Restrict who can push": only these logins (an App's `<slug>[bot]`) may. */
  pushAllowances?: string[];
}

/** A ruleset rule in GitHub's own JSON shape, e.g. `{ type: 'required_status_checks', parameters: {...} }`. */
export interface RulesetRule {
  type: string;
  parameters?: Record<string, unknown>;
}

export interface Ruleset {
  id: number;
  name: string;
  enforcement: 'active' | 'evaluate' | 'disabled';
  /** `~DEFAULT_BRANCH`, `~ALL`, or `refs/heads/<fnmatch pattern>`. */
  include: string[];
  exclude: string[];
  rules: RulesetRule[];
  /** Logins on the ruleset's bypass list (an App's `<slug>[bot]`). */
  bypassLogins: string[];
}

export interface Label {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface Review {
  id: number;
  user: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  commitId: Sha;
  submittedAt: string;
}

export interface PullRequest {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: string;
  headRef: string;
  headSha: Sha;
  baseRef: string;
  state: 'open' | 'closed';
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: Sha | null;
  closedAt: string | null;
  createdAt: string;
  updatedAt: string;
  labels: string[];
  /** Label changes, oldest first: the issue's events (GET .../issues/{n}/events) list them with who made them. */
  labelEvents: Array<{ id: number; event: 'labeled' | 'unlabeled'; label: string; actor: string; createdAt: string }>;
  reviews: Review[];
  /** Test-set mergeability; undefined: computed from content and conflicts. */
  mergeableOverride?: { mergeable: boolean | null; mergeableState: string };
  /** Test-set `rebaseable` (a rebase would conflict commit by commit though a merge would not); undefined: as mergeable. */
  rebaseableOverride?: boolean;
  /** Opened from a fork: GitHub's check payloads for its head then list no pull requests. */
  fromFork: boolean;
  /** GETs left that answer `mergeable: null` (GitHub still computing). */
  unknownReads: number;
  /** Pushes so far, to name this PR's changes `#<n>.<k>`. */
  pushes: number;
}

export interface IssueComment {
  id: number;
  issueNumber: number;
  body: string;
  user: string;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRun {
  id: number;
  repo: string;
  headSha: Sha;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null; annotations?: CheckAnnotation[] };
  appId: number;
  checkSuiteId: number;
}

/** A line a check run points at (GitHub shows it in the diff). */
export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
}

export interface CommitStatus {
  id: number;
  repo: string;
  sha: Sha;
  state: 'error' | 'failure' | 'pending' | 'success';
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
}

export interface App {
  id: number;
  slug: string;
  name: string;
  /** The login GitHub gives its installation's actions: `<slug>[bot]`. */
  botLogin: string;
}

export interface Installation {
  id: number;
  account: string;
  appId: number;
  /** ISO time the account's owner suspended the app; absent or null while it runs. */
  suspendedAt?: string | null;
}

export interface Repo {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  /**
   * The owner is on GitHub Free: a private repository then has no branch protection
   * and no rulesets, and reading them answers 403 "Upgrade to GitHub Pro or make this
   * repository public to enable this feature."
   */
  freePlan: boolean;
  createdAt: string;
  deleteBranchOnMerge: boolean;
  /** The repository's merge button settings (allow_merge_commit, allow_squash_merge, allow_rebase_merge). */
  allowedMergeMethods: { merge: boolean; squash: boolean; rebase: boolean };
  /** `refs/heads/<branch>` (and tags) to sha. */
  refs: Map<string, Sha>;
  changes: Map<string, Change>;
  /** Unordered pairs of conflict keys, stored as `a\u0000b` with a < b. */
  conflicts: Set<string>;
  labels: Map<string, Label>;
  pulls: Map<number, PullRequest>;
  comments: IssueComment[];
  nextNumber: number;
  protection: Map<string, BranchProtection>;
  rulesets: Ruleset[];
  permissions: Map<string, Permission>;
}

/** What happened, for webhook delivery; payloads are built when the event is emitted. */
export type FakeEvent =
  | { name: 'pull_request'; action: string; repo: string; number: number; sender: string; extra?: Record<string, unknown> }
  | { name: 'push'; repo: string; ref: string; before: Sha; after: Sha; created: boolean; deleted: boolean; forced: boolean; sender: string }
  | { name: 'create' | 'delete'; repo: string; ref: string; sender: string }
  | { name: 'check_run'; action: 'created' | 'completed'; repo: string; id: number; sender: string }
  | { name: 'check_suite'; action: 'completed'; repo: string; checkSuiteId: number; headSha: Sha; appId: number; sender: string }
  | { name: 'status'; repo: string; id: number; sender: string }
  | { name: 'issue_comment'; action: 'created' | 'edited' | 'deleted'; repo: string; number: number; commentId: number; sender: string }
  | { name: 'pull_request_review'; action: 'submitted'; repo: string; number: number; reviewId: number; sender: string }
  | { name: 'repository'; action: 'renamed'; repo: string; from: string; sender: string };
