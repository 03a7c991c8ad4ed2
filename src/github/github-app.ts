import { LRUCache } from 'lru-cache';
import type { Context, Probot } from 'probot';
import { isTerminal } from '../domain/pull-request-state.js';
import { DEFAULT_QUEUE_CONFIG } from '../domain/queue-config.js';
import { repoKey, type RepoRef } from '../domain/repo.js';
import type { QueueEntryRecord } from '../domain/records.js';
import type { HostEvents } from '../ports/git-host.js';
import type { Stores } from '../ports/stores.js';
import type { PullRequestService } from '../queue/pull-request-service.js';
import type { QueueService } from '../queue/queue-service.js';
import { parseComment, type QueueCommand } from './commands.js';
import { applyDefaultBranchQueueFile, pushTouchesQueueFile, resyncOrganization, syncQueueFileOnPush } from './queue-file-sync.js';
import { noQueueComment, changedAfterCommand, replyTo } from './replies.js';
import { replyOnce } from './reply-once.js';

/** What the webhook handlers hand events to. They only translate: the runner decides. */
export interface GitHubAppDeps {
  stores: Stores;
  pullRequests: PullRequestService;
  /** Queues the repository's `.github/merge-queue.yml` creates and configures. */
  queues: QueueService;
  events: HostEvents;
  /** Check results on a commit changed (check run, check suite, status): whether the commit is one a queue tests. */
  checksChanged(repo: RepoRef, sha: string): Promise<boolean>;
  /** A queue's enqueued entries, from this replica's cache (a read by id while nothing was recorded since). */
  enqueued(queueId: string): Promise<QueueEntryRecord[]>;
  /** The host name queues use for this GitHub (github.com, or the GHE host). */
  hostName: string;
  /** Remembers which installation serves a repository (for API calls outside webhooks). */
  rememberInstallation(repo: RepoRef, installationId: number): void;
  /** This App's id: events about its own check runs are its own doing, not news. */
  appId: number;
  /** The App lost or regained access to a repository: its cached installation is dropped. */
  forgetInstallation(repo: RepoRef): void;
  /** Tells a queue's runner the host cannot be used (the App is gone) or can again. */
  hostAccess(queueId: string, change: { available: false; message: string } | { available: true }): Promise<void>;
}

type Payload = Record<string, unknown>;
const WRITERS = new Set(['admin', 'maintain', 'write']);

function repoOf(deps: GitHubAppDeps, payload: Payload): RepoRef {
  const repository = payload.repository as { name: string; owner: { login: string } };
  return { host: deps.hostName, owner: repository.owner.login, name: repository.name };
}

/**
 * The Probot app: GitHub events in, queue events out. Labels and `/mq`
 * commands submit, cancel and restart; PR, push and check events become facts
 * for the engine. Nothing here merges or decides.
 */
export function githubApp(deps: GitHubAppDeps) {
  return (app: Probot) => {
    // Which name each repository id was last seen under (in this process): a new name is looked into at once, the same
    // one again after ten minutes (queues created since, by a file or the API, learn the id then).
    const namesOfIds = new LRUCache<string, string>({ max: 10_000, ttl: 10 * 60_000 });
    const withRepo = async (context: Context, work: (repo: RepoRef, payload: Payload) => Promise<void>) => {
      const payload = context.payload as unknown as Payload;
      const repo = repoOf(deps, payload);
      const installation = (payload.installation as { id?: number } | undefined)?.id;
      if (installation) deps.rememberInstallation(repo, installation);
      // The repository's queues follow it by GitHub's id, whatever name the event gives (renamed, transferred).
      const id = (payload.repository as { id?: number } | undefined)?.id;
      if (typeof id === 'number' && namesOfIds.get(`${repo.host}:${id}`) !== repoKey(repo)) {
        await deps.queues.followRepository(repo, String(id), () => currentName(context, repo, id));
        namesOfIds.set(`${repo.host}:${id}`, repoKey(repo));
      }
      await work(repo, payload);
    };

    app.on(['pull_request.labeled', 'pull_request.unlabeled'], async (context) =>
      withRepo(context, async (repo, payload) => {
        const pr = payload.pull_request as { number: number; base: { ref: string }; head?: { sha?: string }; updated_at?: string };
        // The label's time (the PR was updated by it): the App's reply comes after it.
        const reply = (body: string) => replyOnce(context, body, pr.updated_at);
        const label = (payload.label as { name?: string } | undefined)?.name ?? '';
        // Only the default label may create a queue from the file (any other label on a repository without queues costs nothing).
        const mayConfigure = context.payload.action === 'labeled' && label.toLowerCase() === DEFAULT_QUEUE_CONFIG.enqueueingLabel;
        const sender = (payload.sender as { login?: string } | undefined)?.login ?? '';
        const queue = mayConfigure ? await findOrConfigure(deps, context, repo, pr.base.ref, () => canWrite(context, sender)) : await deps.stores.queues.find(repo, pr.base.ref);
        if (!queue) {
          if (mayConfigure) {
            // A queue only the repository's file names is configured for writers alone: anyone else is told why (found by review: told "no queue").
            const body = (await canWrite(context, sender)) ? noQueueComment(pr.base.ref) : replyTo(`@${sender}, only people with write access to this repository can queue pull requests with the \`${label}\` label; nothing changed in the queue.`);
            await reply(body);
          }
          return;
        }
        if (label.toLowerCase() !== queue.config.enqueueingLabel.toLowerCase()) return;
        // The same rule as commands: triage can label, but only writers decide what merges (and the bots they named).
        const senderType = (payload.sender as { type?: string } | undefined)?.type;
        const mayLabel = async (login: string, type: string | undefined) => (type === 'Bot' && (queue.config.labelingBots ?? []).some((bot) => bot.toLowerCase() === login.toLowerCase())) || (await canWrite(context, login));
        if (!(await mayLabel(sender, senderType))) {
          const removed = context.payload.action === 'unlabeled';
          const entry = await deps.stores.entries.find(queue.id, pr.number);
          const queued = entry !== null && !isTerminal(entry.state);
          // The label now agrees with the queue (put on a PR it holds, the App's own putting back among them; taken off
          // one it does not): nothing changes, nothing to say.
          if (removed !== queued) return;
          // A label a person took off a PR the queue holds is put back: the label says the PR is queued (and until the
          // first read of the PR since its submission, that read would take it out without it: engine applyFacts).
          // Not a bot's: one that takes the label off whenever it is put on would fight the App for ever.
          const person = senderType === 'User';
          const restored = removed && person && (await restoreLabel(context, pr.number, queue.config.enqueueingLabel, pr.updated_at));
          await reply(
            replyTo(
              `@${sender}, only people with write access to this repository can ${removed ? 'remove' : 'queue'} pull requests with the \`${queue.config.enqueueingLabel}\` label; ${restored ? 'the label is back, and ' : ''}nothing changed in the queue.${senderType === 'Bot' ? ` A bot's label counts once the queue's \`labelingBots\` setting names it.` : ''}`,
            ),
          );
          return;
        }
        // Deliveries arrive late, twice or out of order: the PR's labels now decide, not the event's action. A removal is
        // checked here (a stale `unlabeled` must not take out a PR whose label was put back). A `labeled` handled after
        // the label was removed is checked by the runner instead: the PR's facts, read after every submission anyway,
        // list its labels, and the first read since takes it out without the label (engine applyFacts); a read here
        // would cost a request per labelled PR.
        const labeled = context.payload.action === 'labeled';
        if (!labeled && (await hasLabel(context, pr.number, queue.config.enqueueingLabel))) {
          // Put back since: by someone who may, or the removal stands (found by review: triage putting the label back
          // before the removal's delivery was handled kept the PR in the queue, and it landed). Its own label event is
          // refused and answered when handled.
          const putBackBy = await lastLabeledBy(context, pr.number, queue.config.enqueueingLabel, deps.appId);
          if (!putBackBy || (await mayLabel(putBackBy.login, putBackBy.type))) return;
        }
        const ref = { repo, targetBranch: pr.base.ref, prNumber: pr.number };
        // The head the writer labeled is what is submitted: a push after it (read as the PR's facts) cancels it.
        const result = labeled
          ? await deps.pullRequests.submit({ ...ref, ...(pr.head?.sha ? { headSha: pr.head.sha } : {}), label: queue.config.enqueueingLabel })
          : await deps.pullRequests.cancel(ref);
        // A label taken off a PR no longer in the queue (ejected or merged with the label left on) changes nothing to say.
        const ended = !labeled && !result.ok && result.failure.kind === 'invalid';
        if (!result.ok && result.failure.kind !== 'not_found' && !ended) {
          await reply(replyTo(result.failure.message));
        }
      }),
    );

    app.on(
      [
        'pull_request.synchronize',
        'pull_request.closed',
        'pull_request.reopened',
        'pull_request.edited',
        'pull_request.converted_to_draft',
        'pull_request.ready_for_review',
        'pull_request_review.submitted',
        'pull_request_review.dismissed',
      ],
      async (context) =>
        withRepo(context, async (repo, payload) => {
          const pr = payload.pull_request as { number: number };
          await deps.events.pullRequestChanged(repo, pr.number);
        }),
    );

    app.on('issue_comment.created', async (context) =>
      withRepo(context, async (repo, payload) => {
        const issue = payload.issue as { number: number; pull_request?: unknown };
        const comment = payload.comment as { id: number; body: string; created_at: string; user: { login: string; type?: string } };
        if (!issue.pull_request || comment.user.type === 'Bot') return;
        const parsed = parseComment(comment.body);
        if (parsed.kind === 'none') return;
        const reply = (body: string) => replyOnce(context, body, comment.created_at);
        const writer = () => canWrite(context, comment.user.login);
        // Asked first: anyone may comment on a public repository, and each command read the PR and the queue before
        // (found by review: a stream of comments from readers spent the installation's requests the queue lands with).
        if (!(await writer())) return void (await reply(replyTo(`@${comment.user.login}, only people with write access to this repository can use queue commands.`)));
        const { data: pull } = await context.octokit.rest.pulls.get(context.repo({ pull_number: issue.number }));
        const queue = await findOrConfigure(deps, context, repo, pull.base.ref, writer);
        if (!queue) return void (await reply(noQueueComment(pull.base.ref)));
        if (!queue.config.commandsEnabled) return void (await reply(replyTo(`Commands are turned off for the \`${pull.base.ref}\` queue.`)));
        // Told only to those who may command the queue, and where commands are on: the App's answers are its own.
        if (parsed.kind === 'invalid') return void (await reply(replyTo(parsed.message)));
        if (parsed.command.kind === 'merge' && changedAfter(pull.updated_at, comment.created_at)) {
          return void (await reply(replyTo(changedAfterCommand(pull.head.sha))));
        }
        if (parsed.command.kind !== 'merge' && (await queuedAgainSince(deps, queue.id, issue.number, comment.created_at))) {
          return void (await reply(replyTo(`This \`/mq ${parsed.command.kind}\` was written before #${issue.number} was queued again, so it changed nothing; comment again to ${parsed.command.kind === 'cancel' ? 'take it out' : 'restart its tests'}.`)));
        }
        const outcome = await run(deps, parsed.command, { repo, targetBranch: pull.base.ref, prNumber: issue.number }, pull.head.sha, `comment:${comment.id}`);
        if (outcome) await reply(replyTo(outcome));
      }),
    );

    // Uninstalled or suspended: nothing can be tested or landed on those repositories until the App is back.
    app.on(['installation.deleted', 'installation.suspend', 'installation.created', 'installation.unsuspend', 'installation_repositories.added', 'installation_repositories.removed'], async (context) => {
      const payload = context.payload as unknown as Payload;
      const installation = payload.installation as { account?: { login?: string } | null };
      const account = installation.account?.login ?? '';
      const action = String(payload.action);
      const listed = (action === 'added' ? payload.repositories_added : action === 'removed' ? payload.repositories_removed : null) as Array<{ name: string }> | null;
      const queues = await deps.stores.queues.listForOrg(deps.hostName, account);
      if (queues.length === 0) return;
      // Asked as the App itself (its JWT, made once per event): an installation token may be what is gone.
      const asApp = await app.auth();
      for (const queue of queues) {
        if (listed && !listed.some((r) => r.name.toLowerCase() === queue.repo.name.toLowerCase())) continue;
        deps.forgetInstallation(queue.repo);
        // These deliveries arrive late and out of order (a suspend handled after its unsuspend, a deleted after the
        // new installation's created): what GitHub says of the repository's installation now decides, not the action.
        const now = await installationNow(asApp, queue.repo);
        const why = now === 'suspended' ? 'suspended' : action === 'removed' ? 'removed from this repository' : 'uninstalled';
        await deps.hostAccess(
          queue.id,
          now !== 'installed' ? { available: false, message: `The GitHub App was ${why} on ${account}: nothing is tested or merged until it is installed on ${queue.repo.owner}/${queue.repo.name} again.` } : { available: true },
        );
      }
    });

    // Renamed or transferred: the repository's queues follow it (webhooks name it by its new name from now on).
    app.on(['repository.renamed', 'repository.transferred'], async (context) =>
      withRepo(context, async (repo, payload) => {
        const changes = payload.changes as { repository?: { name?: { from?: string } }; owner?: { from?: { organization?: { login?: string }; user?: { login?: string } | null } } } | undefined;
        const from: RepoRef = {
          host: repo.host,
          owner: changes?.owner?.from?.organization?.login ?? changes?.owner?.from?.user?.login ?? repo.owner,
          name: changes?.repository?.name?.from ?? repo.name,
        };
        if (from.owner === repo.owner && from.name === repo.name) return;
        deps.forgetInstallation(from);
        // Where it is now, as GitHub says: a rename event handled late names a name since left.
        const id = (payload.repository as { id?: number } | undefined)?.id;
        const to = (typeof id === 'number' ? await currentName(context, repo, id) : null) ?? repo;
        const moved = await deps.queues.moveRepository(from, to);
        const kept = moved.filter((m) => !m.moved).map((m) => m.targetBranch);
        if (kept.length > 0) {
          context.log.warn({ from: `${from.owner}/${from.name}`, to: `${repo.owner}/${repo.name}`, branches: kept }, 'the renamed repository has its own queue for these branches already: the old queues keep the old name');
        }
      }),
    );

    app.on('push', async (context) =>
      withRepo(context, async (repo, payload) => {
        const ref = String(payload.ref ?? '');
        const after = String(payload.after ?? '');
        if (!ref.startsWith('refs/heads/') || /^0+$/.test(after)) return; // Tags and branch deletions.
        const branch = ref.slice('refs/heads/'.length);
        await deps.events.branchMoved(repo, branch, after, { rewound: payload.forced === true });
        const defaultBranch = String((payload.repository as { default_branch?: string }).default_branch ?? '');
        const onDefaultBranch = branch === defaultBranch;
        if (!pushTouchesQueueFile(payload as Parameters<typeof pushTouchesQueueFile>[0])) {
          // A force-push to the default branch may take the file back to an earlier version with no commit listed that
          // touches it (found by review: the queues kept a file's settings no longer on the branch): applied again then,
          // where a file configures the repository's queues already (else the organization's fallback file would take
          // over queues configured through the API: found by the next review).
          const followsFile = async () => (await deps.stores.queues.listForOrg(repo.host, repo.owner, repo)).some((q) => q.configFile);
          if (onDefaultBranch && payload.forced === true && (await followsFile())) await applyDefaultBranchQueueFile(deps, context.octokit, repo);
          return;
        }
        // The queue file changed: checked on the pushed commit, applied when it is the default branch's.
        await syncQueueFileOnPush(deps, context.octokit, repo, { sha: after, onDefaultBranch, defaultBranch, deliveryId: context.id });
        if (onDefaultBranch && repo.name === '.github') await resyncOrganization(deps, context.octokit, repo.host, repo.owner);
      }),
    );

    app.on(['check_run.completed', 'check_run.created', 'check_suite.completed'], async (context) =>
      withRepo(context, async (repo, payload) => {
        const source = (payload.check_run ?? payload.check_suite) as { head_sha?: string; status?: string; pull_requests?: Array<{ number: number }>; app?: { id?: number } } | undefined;
        if (!source?.head_sha) return;
        // A check run created queued or in progress decides nothing (a test run waits for results, a PR's readiness for
        // its checks to end): its completion comes as its own event (found by review: every job of a CI read the PR twice).
        if (context.payload.action === 'created' && source.status !== 'completed') return;
        // Our own "Merge Queue" check run changing says nothing new (and reading the PR for it costs a request).
        if (source.app?.id === deps.appId) return;
        // A queue's test commit is no PR's head: nothing more to look for (found by review: every check of every test
        // run read every queue's entries). A PR whose head is the very commit a queue tested (pushed from it) is
        // missed here; the runner's refresh reads such a PR again while its facts are unsettled.
        if (await deps.checksChanged(repo, source.head_sha)) return;
        // A PR's own checks decide whether GitHub calls it mergeable (required checks). Checks of a
        // fork's PR name no pull requests (GitHub leaves the list empty): found by head sha instead.
        const named = (source.pull_requests ?? []).map((pr) => pr.number);
        const prs = named.length > 0 ? named : await waitingPullRequestsWithHead(deps, repo, source.head_sha);
        for (const pr of prs) await deps.events.pullRequestChanged(repo, pr);
      }),
    );

    app.on('status', async (context) =>
      withRepo(context, async (repo, payload) => {
        const sha = String(payload.sha);
        if (await deps.checksChanged(repo, sha)) return;
        for (const prNumber of await waitingPullRequestsWithHead(deps, repo, sha)) await deps.events.pullRequestChanged(repo, prNumber);
      }),
    );
  };
}

/**
 * The queue for a PR's target branch; when there is none yet, the queue file on
 * the default branch (the repository's own, or its organization's fallback) may
 * name it: created from the file then (a repository that never pushed its own file).
 * Only for someone with write access (anyone else's label or command costs no GitHub reads).
 */
async function findOrConfigure(deps: GitHubAppDeps, context: Context, repo: RepoRef, branch: string, mayConfigure: () => Promise<boolean>) {
  const queue = await deps.stores.queues.find(repo, branch);
  if (queue || !(await mayConfigure())) return queue;
  const changes = await applyDefaultBranchQueueFile(deps, context.octokit, repo);
  return changes?.some((c) => c.targetBranch === branch) ? deps.stores.queues.find(repo, branch) : null;
}

/** The App's installation on the repository as GitHub has it now (`octokit`: authenticated as the App, by its JWT). */
async function installationNow(octokit: Awaited<ReturnType<Probot['auth']>>, repo: RepoRef): Promise<'installed' | 'suspended' | 'missing'> {
  try {
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/installation', { owner: repo.owner, repo: repo.name });
    return data.suspended_at ? 'suspended' : 'installed';
  } catch (error) {
    if ((error as { status?: unknown }).status === 404) return 'missing';
    throw error; // Handled again by the delivery sweep.
  }
}

/** GitHub compares label names case-insensitively. */
const sameLabel = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The repository's name now, as GitHub has it (a request naming an old name is redirected to the repository), when it
 * is still the repository with this id; null when GitHub knows no such repository there.
 */
async function currentName(context: Context, named: RepoRef, id: number): Promise<RepoRef | null> {
  try {
    const { data } = await context.octokit.rest.repos.get({ owner: named.owner, repo: named.name });
    return data.id === id ? { host: named.host, owner: data.owner.login, name: data.name } : null;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

/**
 * Who last put the label `name` on the PR (or issue), from its events (oldest first, so every page is read); null when
 * none says. This App's own labels are passed over: it only puts back what someone who may not took off, so who put the
 * label on before is who decided.
 */
async function lastLabeledBy(context: Context, issueNumber: number, name: string, appId: number): Promise<{ login: string; type?: string } | null> {
  const events = await context.octokit.paginate(context.octokit.rest.issues.listEvents, context.repo({ issue_number: issueNumber, per_page: 100 }));
  const byOthers = events.filter((e) => (e as { performed_via_github_app?: { id?: number } | null }).performed_via_github_app?.id !== appId);
  const last = byOthers.filter((e) => e.event === 'labeled' && sameLabel((e as { label?: { name?: string } }).label?.name ?? '', name)).at(-1);
  return last?.actor ? { login: last.actor.login, type: last.actor.type } : null;
}

/** Whether the PR (or issue) carries the label `name` now, as GitHub says (label names compare case-insensitively). */
async function hasLabel(context: Context, issueNumber: number, name: string): Promise<boolean> {
  const labels = await context.octokit.paginate(context.octokit.rest.issues.listLabelsOnIssue, context.repo({ issue_number: issueNumber, per_page: 100 }));
  return labels.some((label) => sameLabel(label.name, name));
}

/**
 * Puts the label back on a PR, unless it is back already or the PR changed after the removal (`removedAt`, its
 * `updated_at` then): a removal handled late must not undo what someone did since (a writer putting the label back
 * and taking it off again to take the PR out). Whether it did.
 */
async function restoreLabel(context: Context, prNumber: number, label: string, removedAt: string | undefined): Promise<boolean> {
  const { data: issue } = await context.octokit.rest.issues.get(context.repo({ issue_number: prNumber }));
  if (issue.labels.some((l) => sameLabel(typeof l === 'string' ? l : (l.name ?? ''), label))) return false;
  if (removedAt === undefined || Date.parse(issue.updated_at) > Date.parse(removedAt)) return false;
  await context.octokit.rest.issues.addLabels(context.repo({ issue_number: prNumber, labels: [label] }));
  return true;
}

/** Queued PRs of this repository waiting at head `sha` (commit statuses never name PRs; checks of forks' PRs do not). */
async function waitingPullRequestsWithHead(deps: GitHubAppDeps, repo: RepoRef, sha: string): Promise<number[]> {
  const numbers: number[] = [];
  for (const queue of await deps.stores.queues.listForOrg(repo.host, repo.owner, repo)) {
    // From the cache: a status or check event is frequent, and reading every entry for it grew with the queue.
    for (const entry of await deps.enqueued(queue.id)) {
      if (entry.state === 'NOT_READY' && entry.facts?.headSha === sha) numbers.push(entry.prNumber);
    }
  }
  return numbers;
}

/**
 * Carries out a command; answers a sentence for the PR when it could not. `headSha`: the PR's head when the command was
 * read (what `/mq merge` submits). `requestId`: the comment, so that a delivery handled again restarts tests once.
 */
async function run(deps: GitHubAppDeps, command: QueueCommand, ref: { repo: RepoRef; targetBranch: string; prNumber: number }, headSha: string, requestId: string): Promise<string | null> {
  const result =
    command.kind === 'merge'
      ? // What the comment does not name is left as it is on a PR already queued (`--priority` alone keeps its --no-batch).
        await deps.pullRequests.submit({ ...ref, ...(command.priority !== undefined ? { priority: command.priority } : {}), ...(command.noBatch ? { noBatch: true } : {}), headSha })
      : command.kind === 'cancel'
        ? await deps.pullRequests.cancel(ref)
        : await deps.pullRequests.restart(ref, requestId);
  return result.ok ? null : result.failure.message;
}

/**
 * Whether GitHub changed the PR after a comment was made (`updated_at`, server time, in seconds; a push moves it).
 * A command acts on the head GitHub gives when it is handled, which a push after the comment (a delivery handled
 * late, or retried minutes later) has replaced: that head was never approved. Anything else that changed the PR
 * meanwhile refuses too (the writer comments again); a push within the comment's own second is not told apart.
 */
function changedAfter(updatedAt: string, commentedAt: string): boolean {
  const updated = Date.parse(updatedAt);
  const commented = Date.parse(commentedAt);
  return Number.isFinite(updated) && Number.isFinite(commented) && updated > commented;
}

/** Clocks differ: a PR queued again up to this long after a comment (by this service's clock) may have come before it. */
const COMMAND_CLOCK_SKEW_MS = 30_000;

/**
 * Whether the PR's current attempt began after the comment was written: a `/mq cancel` or `/mq restart` handled late (its
 * delivery retried minutes later, or asked of GitHub again days later) was meant for an earlier attempt (found by
 * review: it took out a PR another writer had queued again since).
 */
async function queuedAgainSince(deps: GitHubAppDeps, queueId: string, prNumber: number, commentedAt: string): Promise<boolean> {
  const commented = Date.parse(commentedAt);
  if (!Number.isFinite(commented)) return false;
  const entry = await deps.stores.entries.find(queueId, prNumber);
  return entry !== null && entry.submittedAt.getTime() > commented + COMMAND_CLOCK_SKEW_MS;
}

/** How long an answer about someone's write access is reused (a label on four PRs asks once). */
const PERMISSION_MEMORY_MS = 60_000;
const permissions = new Map<string, { writes: Promise<boolean>; at: number }>();

/** Whether `login` has write access (or more) to the event's repository: who may put PRs in the queue or take them out. */
async function canWrite(context: Context, login: string): Promise<boolean> {
  if (!login) return false;
  const { owner, repo } = context.repo();
  const key = `${owner}/${repo}:${login}`.toLowerCase();
  const known = permissions.get(key);
  if (known && Date.now() - known.at < PERMISSION_MEMORY_MS) return known.writes;
  // The promise is shared, so labels on several PRs at once ask once.
  const writes = context.octokit.rest.repos
    .getCollaboratorPermissionLevel(context.repo({ username: login }))
    .then(
      ({ data: permission }) => WRITERS.has(permission.permission) || WRITERS.has(permission.role_name ?? ''),
      // No such user here (a bot account, a deleted user): no write access, an answer and not an outage (found by
      // review: thrown, the delivery was tried five times and given up, and nobody was told).
      (error: unknown) => {
        if ((error as { status?: number }).status === 404) return false;
        throw error;
      },
    );
  if (permissions.size > 10_000) permissions.clear();
  permissions.set(key, { writes, at: Date.now() });
  // A failed lookup is not remembered.
  writes.catch(() => permissions.delete(key));
  return writes;
}
