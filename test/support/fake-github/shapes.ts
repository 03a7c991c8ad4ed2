import { treeSha } from './git.js';
import { requirementsFor, rulesetApplies } from './protection.js';
import type { App, CheckRun, Commit, CommitStatus, Installation, IssueComment, Label, PullRequest, Repo, Review, Ruleset, Sha } from './model.js';
import type { FakeState } from './state.js';

/**
 * GitHub's JSON for each record. Only fields with meaning are set here (ids, shas,
 * states, names, the links a client follows); the server completes every other field
 * the description requires (conform.ts) and validates the result. Webhook payloads
 * reuse these, as GitHub's do.
 */

type Obj = Record<string, unknown>;

export class Shapes {
  constructor(
    private readonly state: FakeState,
    /** The fake's API root, e.g. http://127.0.0.1:PORT (set once the server listens). */
    public api: string,
    /** Where `html_url`s point. */
    readonly web: string,
  ) {}

  nodeId(kind: string, id: number | string): string {
    return Buffer.from(`${kind}:${id}`).toString('base64');
  }

  user(login: string): Obj {
    const u = this.state.user(login);
    return {
      login: u.login,
      id: u.id,
      node_id: this.nodeId(u.type, u.id),
      avatar_url: `${this.web}/avatars/${encodeURIComponent(u.login)}`,
      gravatar_id: '',
      url: `${this.api}/users/${encodeURIComponent(u.login)}`,
      html_url: `${this.web}/${encodeURIComponent(u.login)}`,
      type: u.type,
      site_admin: false,
    };
  }

  repo(repo: Repo): Obj {
    const url = `${this.api}/repos/${repo.fullName}`;
    return {
      id: repo.id,
      node_id: this.nodeId('Repository', repo.id),
      name: repo.name,
      full_name: repo.fullName,
      owner: this.user(repo.owner),
      private: repo.private,
      visibility: repo.private ? 'private' : 'public',
      html_url: `${this.web}/${repo.fullName}`,
      description: null,
      fork: false,
      url,
      pulls_url: `${url}/pulls{/number}`,
      issues_url: `${url}/issues{/number}`,
      git_refs_url: `${url}/git/refs{/sha}`,
      statuses_url: `${url}/statuses/{sha}`,
      branches_url: `${url}/branches{/branch}`,
      merges_url: `${url}/merges`,
      compare_url: `${url}/compare/{base}...{head}`,
      commits_url: `${url}/commits{/sha}`,
      clone_url: `${this.web}/${repo.fullName}.git`,
      default_branch: repo.defaultBranch,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      pushed_at: repo.createdAt,
      delete_branch_on_merge: repo.deleteBranchOnMerge,
      allow_merge_commit: repo.allowedMergeMethods.merge,
      allow_squash_merge: repo.allowedMergeMethods.squash,
      allow_rebase_merge: repo.allowedMergeMethods.rebase,
      archived: false,
      disabled: false,
    };
  }

  label(repo: Repo, label: Label): Obj {
    return {
      id: label.id,
      node_id: this.nodeId('Label', label.id),
      url: `${this.api}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`,
      name: label.name,
      description: label.description,
      color: label.color,
      default: false,
    };
  }

  authorAssociation(repo: Repo, login: string): string {
    if (login.toLowerCase() === repo.owner.toLowerCase()) return 'OWNER';
    const p = this.state.permission(repo, login);
    return p === 'admin' || p === 'maintain' || p === 'write' ? 'COLLABORATOR' : 'CONTRIBUTOR';
  }

  pull(repo: Repo, pr: PullRequest, mergeability = this.state.mergeability(repo, pr)): Obj {
    const url = `${this.api}/repos/${repo.fullName}/pulls/${pr.number}`;
    const html = `${this.web}/${repo.fullName}/pull/${pr.number}`;
    const issue = `${this.api}/repos/${repo.fullName}/issues/${pr.number}`;
    const side = (ref: string, sha: string) => ({ label: `${repo.owner}:${ref}`, ref, sha, user: this.user(repo.owner), repo: this.repo(repo) });
    const commits = this.state.branchHead(repo, pr.baseRef)
      ? Math.max(1, this.state.getCommit(pr.headSha).tree.filter((c) => !this.state.getCommit(this.state.branchHead(repo, pr.baseRef)!).tree.includes(c)).length)
      : 1;
    return {
      url,
      id: pr.id,
      node_id: this.nodeId('PullRequest', pr.id),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: issue,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${this.api}/repos/${repo.fullName}/pulls/comments{/number}`,
      comments_url: `${issue}/comments`,
      statuses_url: `${this.api}/repos/${repo.fullName}/statuses/${pr.headSha}`,
      number: pr.number,
      state: pr.state,
      locked: false,
      title: pr.title,
      user: this.user(pr.user),
      body: pr.body,
      labels: pr.labels.map((name) => this.label(repo, this.state.label(repo, name))),
      milestone: null,
      active_lock_reason: null,
      created_at: pr.createdAt,
      updated_at: pr.updatedAt,
      closed_at: pr.closedAt,
      merged_at: pr.mergedAt,
      merge_commit_sha: pr.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: side(pr.headRef, pr.headSha),
      base: side(pr.baseRef, this.state.branchHead(repo, pr.baseRef) ?? pr.headSha),
      _links: {
        self: { href: url },
        html: { href: html },
        issue: { href: issue },
        comments: { href: `${issue}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: `${this.api}/repos/${repo.fullName}/pulls/comments{/number}` },
        commits: { href: `${url}/commits` },
        statuses: { href: `${this.api}/repos/${repo.fullName}/statuses/${pr.headSha}` },
      },
      author_association: this.authorAssociation(repo, pr.user),
      auto_merge: null,
      draft: pr.draft,
      merged: pr.merged,
      mergeable: mergeability.mergeable,
      rebaseable: pr.rebaseableOverride ?? mergeability.mergeable,
      mergeable_state: mergeability.mergeableState,
      merged_by: pr.mergedBy ? this.user(pr.mergedBy) : null,
      comments: repo.comments.filter((c) => c.issueNumber === pr.number).length,
      review_comments: 0,
      maintainer_can_modify: false,
      commits,
      additions: commits,
      deletions: 0,
      changed_files: commits,
    };
  }

  /** A PR seen through the issues API (and in `issue_comment` payloads). */
  issue(repo: Repo, pr: PullRequest): Obj {
    const url = `${this.api}/repos/${repo.fullName}/issues/${pr.number}`;
    const html = `${this.web}/${repo.fullName}/pull/${pr.number}`;
    return {
      id: pr.id + 1_000_000,
      node_id: this.nodeId('Issue', pr.id),
      url,
      repository_url: `${this.api}/repos/${repo.fullName}`,
      labels_url: `${url}/labels{/name}`,
      comments_url: `${url}/comments`,
      events_url: `${url}/events`,
      html_url: html,
      number: pr.number,
      state: pr.state,
      state_reason: pr.state === 'closed' ? 'completed' : null,
      title: pr.title,
      body: pr.body,
      user: this.user(pr.user),
      labels: pr.labels.map((name) => this.label(repo, this.state.label(repo, name))),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: repo.comments.filter((c) => c.issueNumber === pr.number).length,
      pull_request: {
        url: `${this.api}/repos/${repo.fullName}/pulls/${pr.number}`,
        html_url: html,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        merged_at: pr.mergedAt,
      },
      closed_at: pr.closedAt,
      created_at: pr.createdAt,
      updated_at: pr.updatedAt,
      draft: pr.draft,
      author_association: this.authorAssociation(repo, pr.user),
    };
  }

  /** The short PR form inside check runs (`pull-request-minimal`). */
  pullMinimal(repo: Repo, pr: PullRequest): Obj {
    const r = { id: repo.id, url: `${this.api}/repos/${repo.fullName}`, name: repo.name };
    return {
      id: pr.id,
      number: pr.number,
      url: `${this.api}/repos/${repo.fullName}/pulls/${pr.number}`,
      head: { ref: pr.headRef, sha: pr.headSha, repo: r },
      base: { ref: pr.baseRef, sha: this.state.branchHead(repo, pr.baseRef) ?? pr.headSha, repo: r },
    };
  }

  gitUser(login: string, date: string): Obj {
    return { name: login, email: `${login.replace(/\[bot\]$/, '')}@users.noreply.github.com`, date };
  }

  /** `git-commit` (GET/POST git/commits). */
  gitCommit(repo: Repo, commit: Commit): Obj {
    const tree = treeSha(commit.tree);
    return {
      sha: commit.sha,
      node_id: this.nodeId('Commit', commit.sha),
      url: `${this.api}/repos/${repo.fullName}/git/commits/${commit.sha}`,
      html_url: `${this.web}/${repo.fullName}/commit/${commit.sha}`,
      author: this.gitUser(commit.author, commit.date),
      committer: this.gitUser('GitHub', commit.date),
      tree: { sha: tree, url: `${this.api}/repos/${repo.fullName}/git/trees/${tree}` },
      message: commit.message,
      parents: commit.parents.map((sha) => this.parent(repo, sha)),
      verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
    };
  }

  /** `commit` (merges API, branches, commits/{ref}, compare). */
  commit(repo: Repo, commit: Commit): Obj {
    const url = `${this.api}/repos/${repo.fullName}/commits/${commit.sha}`;
    const tree = treeSha(commit.tree);
    return {
      url,
      sha: commit.sha,
      node_id: this.nodeId('Commit', commit.sha),
      html_url: `${this.web}/${repo.fullName}/commit/${commit.sha}`,
      comments_url: `${url}/comments`,
      commit: {
        url: `${this.api}/repos/${repo.fullName}/git/commits/${commit.sha}`,
        author: this.gitUser(commit.author, commit.date),
        committer: this.gitUser('GitHub', commit.date),
        message: commit.message,
        comment_count: 0,
        tree: { sha: tree, url: `${this.api}/repos/${repo.fullName}/git/trees/${tree}` },
      },
      author: this.user(commit.author),
      committer: null,
      parents: commit.parents.map((sha) => this.parent(repo, sha)),
    };
  }

  private parent(repo: Repo, sha: Sha): Obj {
    return { sha, url: `${this.api}/repos/${repo.fullName}/git/commits/${sha}`, html_url: `${this.web}/${repo.fullName}/commit/${sha}` };
  }

  gitRef(repo: Repo, ref: string, sha: Sha): Obj {
    return {
      ref,
      node_id: this.nodeId('Ref', `${repo.id}:${ref}`),
      url: `${this.api}/repos/${repo.fullName}/git/${ref}`,
      object: { type: 'commit', sha, url: `${this.api}/repos/${repo.fullName}/git/commits/${sha}` },
    };
  }

  app(app: App): Obj {
    return {
      id: app.id,
      slug: app.slug,
      node_id: this.nodeId('Integration', app.id),
      client_id: `Iv1.${app.id.toString(16).padStart(16, '0')}`,
      owner: this.user(app.slug === 'github-actions' ? 'github' : 'octocat'),
      name: app.name,
      description: null,
      external_url: `${this.web}/apps/${app.slug}`,
      html_url: `${this.web}/apps/${app.slug}`,
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
      permissions: { checks: 'write', contents: 'write', issues: 'write', metadata: 'read', pull_requests: 'write', statuses: 'write', administration: 'read' },
      events: [],
    };
  }

  checkRun(run: CheckRun): Obj {
    const repo = this.state.repo(run.repo);
    const app = this.state.apps.get(run.appId);
    return {
      id: run.id,
      node_id: this.nodeId('CheckRun', run.id),
      head_sha: run.headSha,
      external_id: run.externalId,
      url: `${this.api}/repos/${repo.fullName}/check-runs/${run.id}`,
      html_url: `${this.web}/${repo.fullName}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: run.startedAt,
      completed_at: run.completedAt,
      output: { title: run.output.title, summary: run.output.summary, text: run.output.text, annotations_count: run.output.annotations?.length ?? 0, annotations_url: `${this.api}/repos/${repo.fullName}/check-runs/${run.id}/annotations` },
      name: run.name,
      check_suite: { id: run.checkSuiteId },
      app: app ? this.app(app) : null,
      // GitHub lists the open PRs (same repository) whose head is this commit.
      pull_requests: [...repo.pulls.values()].filter((p) => p.state === 'open' && !p.fromFork && p.headSha === run.headSha).map((p) => this.pullMinimal(repo, p)),
    };
  }

  status(status: CommitStatus): Obj {
    return {
      url: `${this.api}/repos/${status.repo}/statuses/${status.sha}`,
      avatar_url: null,
      id: status.id,
      node_id: this.nodeId('StatusContext', status.id),
      state: status.state,
      description: status.description,
      target_url: status.targetUrl,
      context: status.context,
      created_at: status.createdAt,
      updated_at: status.createdAt,
      creator: this.user(status.creator),
    };
  }

  comment(repo: Repo, comment: IssueComment): Obj {
    return {
      id: comment.id,
      node_id: this.nodeId('IssueComment', comment.id),
      url: `${this.api}/repos/${repo.fullName}/issues/comments/${comment.id}`,
      html_url: `${this.web}/${repo.fullName}/pull/${comment.issueNumber}#issuecomment-${comment.id}`,
      issue_url: `${this.api}/repos/${repo.fullName}/issues/${comment.issueNumber}`,
      body: comment.body,
      user: this.user(comment.user),
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
      author_association: this.authorAssociation(repo, comment.user),
    };
  }

  review(repo: Repo, pr: PullRequest, review: Review): Obj {
    const html = `${this.web}/${repo.fullName}/pull/${pr.number}#pullrequestreview-${review.id}`;
    const prUrl = `${this.api}/repos/${repo.fullName}/pulls/${pr.number}`;
    return {
      id: review.id,
      node_id: this.nodeId('PullRequestReview', review.id),
      user: this.user(review.user),
      body: '',
      state: review.state,
      html_url: html,
      pull_request_url: prUrl,
      _links: { html: { href: html }, pull_request: { href: prUrl } },
      submitted_at: review.submittedAt,
      commit_id: review.commitId,
      author_association: this.authorAssociation(repo, review.user),
    };
  }

  /** `status-check-policy`, or undefined when the branch has no required status checks. */
  requiredStatusChecks(repo: Repo, branch: string): Obj | undefined {
    const rsc = repo.protection.get(branch)?.requiredStatusChecks;
    if (!rsc) return undefined;
    const url = `${this.api}/repos/${repo.fullName}/branches/${encodeURIComponent(branch)}/protection/required_status_checks`;
    return {
      url,
      strict: rsc.strict,
      contexts: rsc.checks.map((c) => c.context),
      checks: rsc.checks.map((c) => ({ context: c.context, app_id: c.appId ?? null })),
      contexts_url: `${url}/contexts`,
    };
  }

  branchProtection(repo: Repo, branch: string): Obj {
    const p = repo.protection.get(branch);
    const url = `${this.api}/repos/${repo.fullName}/branches/${encodeURIComponent(branch)}/protection`;
    return {
      url,
      enabled: true,
      ...(p?.requiredStatusChecks ? { required_status_checks: { enforcement_level: 'non_admins', ...this.requiredStatusChecks(repo, branch) } } : {}),
      ...(p?.requiredApprovingReviewCount !== undefined
        ? {
            required_pull_request_reviews: {
              url: `${url}/required_pull_request_reviews`,
              required_approving_review_count: p.requiredApprovingReviewCount,
              dismiss_stale_reviews: false,
              require_code_owner_reviews: false,
              bypass_pull_request_allowances: this.allowances(p.bypassPullRequests ?? []),
            },
          }
        : {}),
      ...(p?.pushAllowances
        ? { restrictions: { url: `${url}/restrictions`, users_url: `${url}/restrictions/users`, teams_url: `${url}/restrictions/teams`, apps_url: `${url}/restrictions/apps`, ...this.allowances(p.pushAllowances) } }
        : {}),
      required_linear_history: { enabled: p?.requiredLinearHistory ?? false },
      allow_force_pushes: { enabled: p?.allowForcePushes ?? false },
    };
  }

  /** Users and apps (logins `<slug>[bot]`) of a bypass or push allowance list. */
  private allowances(logins: string[]): Obj {
    const apps = [...this.state.apps.values()].filter((app) => logins.includes(`${app.slug}[bot]`));
    // Protection's schema wants a string description where the app endpoint allows null.
    return { users: logins.filter((l) => !l.endsWith('[bot]')).map((l) => this.user(l)), teams: [], apps: apps.map((app) => ({ ...this.app(app), description: '' })) };
  }

  /** GET rulesets/{id}, as the caller (`actor`) sees it. */
  ruleset(repo: Repo, ruleset: Ruleset, actor: string): Obj {
    return {
      id: ruleset.id,
      name: ruleset.name,
      target: 'branch',
      source_type: 'Repository',
      source: repo.fullName,
      enforcement: ruleset.enforcement,
      bypass_actors: [],
      current_user_can_bypass: ruleset.bypassLogins.includes(actor) ? 'always' : 'never',
      conditions: { ref_name: { include: ruleset.include, exclude: ruleset.exclude } },
      rules: ruleset.rules,
      node_id: this.nodeId('RepositoryRuleset', ruleset.id),
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
    };
  }

  branch(repo: Repo, name: string, sha: Sha): Obj {
    const p = repo.protection.get(name);
    const url = `${this.api}/repos/${repo.fullName}/branches/${encodeURIComponent(name)}`;
    const checks = p?.requiredStatusChecks;
    return {
      name,
      commit: this.commit(repo, this.state.getCommit(sha)),
      _links: { html: `${this.web}/${repo.fullName}/tree/${name}`, self: url },
      protected: p !== undefined || requirementsFor(repo, name).sources.includes('ruleset'),
      protection: {
        enabled: p !== undefined,
        required_status_checks: {
          enforcement_level: checks ? 'non_admins' : 'off',
          contexts: checks?.checks.map((c) => c.context) ?? [],
          checks: checks?.checks.map((c) => ({ context: c.context, app_id: c.appId ?? null })) ?? [],
        },
      },
      protection_url: `${url}/protection`,
    };
  }

  /** GET rules/branches/{branch}: each active rule with the ruleset it comes from. */
  branchRules(repo: Repo, branch: string): Obj[] {
    return repo.rulesets
      .filter((rs) => rulesetApplies(repo, rs, branch))
      .flatMap((rs) =>
        rs.rules.map((rule) => ({ ...rule, ruleset_source_type: 'Repository', ruleset_source: repo.fullName, ruleset_id: rs.id })),
      );
  }

  installation(installation: Installation): Obj {
    const app = this.state.apps.get(installation.appId)!;
    const account = this.state.user(installation.account);
    return {
      id: installation.id,
      account: this.user(installation.account),
      repository_selection: 'all',
      access_tokens_url: `${this.api}/app/installations/${installation.id}/access_tokens`,
      repositories_url: `${this.api}/installation/repositories`,
      html_url: `${this.web}/settings/installations/${installation.id}`,
      app_id: app.id,
      app_slug: app.slug,
      target_id: account.id,
      target_type: account.type === 'Organization' ? 'Organization' : 'User',
      permissions: this.app(app).permissions,
      events: [],
      created_at: '2024-01-01T00:00:00Z',
      updated_at: '2024-01-01T00:00:00Z',
      single_file_name: null,
      suspended_by: null,
      suspended_at: installation.suspendedAt ?? null,
    };
  }
}
