import { mergeQueueFiles } from '../queue-file/merge-queue-files.js';
import type { Context } from 'probot';
import { makeOnceLookingFirst, NOT_REPEATED_BLIND } from '../adapters/github/index.js';
import type { RepoRef } from '../domain/repo.js';
import type { Stores } from '../ports/stores.js';
import type { QueueService } from '../queue/queue-service.js';
import { applyQueueFile, type QueueFileChange } from '../queue-file/apply-queue-file.js';
import { QUEUE_FILE_PATH, type QueueFile } from '../queue-file/queue-file-schema.js';
import { checkQueueFile, readQueueFileText, type QueueFileProblem, type QueueFileReading } from '../queue-file/read-queue-file.js';

/** The check run that reports on a commit that changed the queue file. */
export const QUEUE_FILE_CHECK_NAME = 'Merge queue settings';

/** GitHub takes at most 50 annotations per request. */
const MAX_ANNOTATIONS = 50;

type Octokit = Context['octokit'];

export interface QueueFileSyncDeps {
  stores: Stores;
  queues: QueueService;
}

/** Whether a push's commits touched the queue file (the payload lists each commit's paths). */
export function pushTouchesQueueFile(payload: { commits?: Array<{ added?: string[]; modified?: string[]; removed?: string[] }> }): boolean {
  return (payload.commits ?? []).some((c) => [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])].includes(QUEUE_FILE_PATH));
}

/**
 * Reads the queue file at a commit through Probot's config loader (the
 * organization's `.github` repository when the repository has none, and
 * `_extends`) and checks it with the API's schema: problems come back with
 * their lines; `from` names the repository whose file it was.
 */
export async function loadQueueFile(octokit: Octokit, repo: RepoRef, sha: string | undefined): Promise<{ found: boolean; reading: QueueFileReading; from?: { owner: string; repo: string } }> {
  let merged: { config: Record<string, unknown>; files: Array<{ owner: string; repo: string; config: unknown }> };
  try {
    merged = (await octokit.config.get({
      owner: repo.owner,
      repo: repo.name,
      path: QUEUE_FILE_PATH,
      ...(sha ? { branch: sha } : {}),
      defaults: (configs: Array<Record<string, unknown>>) => mergeQueueFiles(configs),
    })) as typeof merged;
  } catch (error) {
    // Only the loader's own refusals are about the file; GitHub failing (or anything else) tries the delivery again.
    if (!(error instanceof Error) || !error.message.startsWith('[@probot/octokit-plugin-config]')) throw error;
    // The loader refuses a file it cannot parse or an `_extends` it cannot follow: say where, from the file itself.
    const own = await ownText(octokit, repo, sha);
    const reading = own !== null ? readQueueFileText(own) : null;
    if (reading && !reading.ok) return { found: true, reading };
    const message = (error instanceof Error ? error.message : String(error)).replace(/^\[@probot\/octokit-plugin-config\]\s*/, '');
    return { found: true, reading: { ok: false, problems: [{ line: 1, path: '', message }] } };
  }
  const first = merged.files.find((file) => file.config);
  if (!first) return { found: false, reading: { ok: true, file: { queues: {} } } };
  const from = { owner: first.owner, repo: first.repo };
  const { _extends: _ignored, ...config } = merged.config;
  const checked = checkQueueFile(config);
  if (checked.ok) return { found: true, reading: checked, from };
  // Lines come from the repository's own file; a setting that came from an extended file is named without one.
  const own = await ownText(octokit, repo, sha);
  const lines = own !== null ? readQueueFileText(own) : null;
  const located = lines && !lines.ok ? lines.problems : [];
  const problems: QueueFileProblem[] = checked.problems.map((p) => located.find((l) => l.path === p.path && l.message === p.message) ?? { ...p, line: 1, message: `${p.message} (set in a file this one extends)` });
  return { found: true, reading: { ok: false, problems }, from };
}

/** The repository's own queue file at `sha`, as text (null when it has none). */
async function ownText(octokit: Octokit, repo: RepoRef, sha: string | undefined): Promise<string | null> {
  try {
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/contents/{path}', {
      owner: repo.owner,
      repo: repo.name,
      path: QUEUE_FILE_PATH,
      ...(sha ? { ref: sha } : {}),
      mediaType: { format: 'raw' },
    });
    return typeof data === 'string' ? data : null;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

/**
 * A push touched the queue file: check it on the pushed commit (a check run
 * naming each bad line) and, on the default branch, apply it. An invalid file
 * changes nothing: the queues keep the settings they had.
 *
 * One check run per delivery (`deliveryId`, its external id): a delivery handled again (what came after the check
 * run failed) finds it, and a POST whose answer a 5xx lost is asked again only once a look finds nothing made.
 * Pushes that touch the queue file are rare: the look first costs one read on a rare path.
 */
export async function syncQueueFileOnPush(
  deps: QueueFileSyncDeps,
  octokit: Octokit,
  repo: RepoRef,
  push: { sha: string; onDefaultBranch: boolean; defaultBranch: string; deliveryId: string },
): Promise<QueueFileChange[] | null> {
  const { found, reading } = await loadQueueFile(octokit, repo, push.sha);
  let changes: QueueFileChange[] | null = null;
  // What applies is the file on the default branch as it is now, not at this push: deliveries come late
  // and out of order, and an older push must not roll back a newer file.
  if (reading.ok && push.onDefaultBranch) changes = await applyDefaultBranchQueueFile(deps, octokit, repo);
  const externalId = `queue-file:${push.deliveryId}`;
  const made = async () => {
    // Every run of the name (GitHub lists only the newest by default): another delivery of the same commit (pushed to
    // a branch, then to main) may have made a newer one (found by review).
    const listing = { owner: repo.owner, repo: repo.name, ref: push.sha, check_name: QUEUE_FILE_CHECK_NAME, filter: 'all' as const, per_page: 100 };
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', listing);
    return data.check_runs.some((run) => run.external_id === externalId) ? true : null;
  };
  await makeOnceLookingFirst(async () => {
    await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      owner: repo.owner,
      repo: repo.name,
      ...NOT_REPEATED_BLIND,
      head_sha: push.sha,
      name: QUEUE_FILE_CHECK_NAME,
      external_id: externalId,
      status: 'completed',
      // Neutral, not action_required: GitHub wants a details_url for that, and the summary says what to do.
      conclusion: reading.ok ? (changes?.some((c) => c.result === 'refused') ? 'neutral' : 'success') : 'failure',
      output: checkOutput(found, reading, changes, push.defaultBranch),
    });
    return true;
  }, made);
  return changes;
}

/**
 * Applies the file the repository's default branch holds now (its own, or the
 * organization's fallback): for a repository whose queue is not there yet when a
 * PR asks for it, after a push changed it, and after the organization's file
 * changed. No file at all: the repository's queues go back to the API. Null when
 * the file is invalid (nothing changes).
 */
export async function applyDefaultBranchQueueFile(deps: QueueFileSyncDeps, octokit: Octokit, repo: RepoRef): Promise<QueueFileChange[] | null> {
  const { found, reading, from } = await loadQueueFile(octokit, repo, undefined);
  if (!reading.ok) return null;
  if (!found || !from) return applyQueueFile(deps, repo, null, { path: QUEUE_FILE_PATH, commitSha: '' });
  // The commit the settings came from: the default branch head of the repository holding the file.
  const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', { owner: from.owner, repo: from.repo, ref: 'HEAD' });
  const own = from.repo.toLowerCase() === repo.name.toLowerCase() && from.owner.toLowerCase() === repo.owner.toLowerCase();
  return applyQueueFile(deps, repo, reading.file, { path: own ? QUEUE_FILE_PATH : `${from.owner}/${from.repo}:${QUEUE_FILE_PATH}`, commitSha: data.sha });
}

/**
 * The organization's `.github` repository changed its queue file: every
 * repository of the organization whose queues follow a file reads it again
 * (those without a file of their own inherit it). No check run in them: the
 * commit is in `.github`, which reports on its own push.
 */
export async function resyncOrganization(deps: QueueFileSyncDeps, octokit: Octokit, host: string, owner: string): Promise<void> {
  const repos = new Map<string, RepoRef>();
  for (const queue of await deps.stores.queues.listForOrg(host, owner)) {
    if (queue.configFile && queue.repo.name !== '.github') repos.set(queue.repo.name.toLowerCase(), queue.repo);
  }
  for (const repo of repos.values()) await applyDefaultBranchQueueFile(deps, octokit, repo);
}

function checkOutput(found: boolean, reading: QueueFileReading, changes: QueueFileChange[] | null, defaultBranch: string) {
  if (!reading.ok) {
    const count = reading.problems.length;
    return {
      title: `${count} problem${count === 1 ? '' : 's'} in ${QUEUE_FILE_PATH}`,
      summary: `The file was not applied: every queue keeps the settings it had. Fix the lines below (the README lists the settings; the JSON Schema is served at \`/schemas/merge-queue.schema.json\`).\n\n${reading.problems.map((p) => `- line ${p.line}${p.path ? ` (\`${p.path}\`)` : ''}: ${p.message}`).join('\n')}`,
      annotations: reading.problems.slice(0, MAX_ANNOTATIONS).map((p) => ({
        path: QUEUE_FILE_PATH,
        start_line: p.line,
        end_line: p.line,
        annotation_level: 'failure' as const,
        message: p.path ? `${p.path}: ${p.message}` : p.message,
      })),
    };
  }
  if (!found) {
    return { title: 'No queue file', summary: changes ? 'The queue file was removed: every queue is configured through the API again, with the settings it had.' : `No queue file at this commit; once on \`${defaultBranch}\`, queues are configured through the API.` };
  }
  const branches = Object.keys((reading as { file: QueueFile }).file.queues);
  if (!changes) {
    return { title: 'Valid queue file', summary: `The file is valid (${branches.length} queue${branches.length === 1 ? '' : 's'}: ${branches.map((b) => `\`${b}\``).join(', ') || 'none'}). It is applied when it lands on \`${defaultBranch}\`.` };
  }
  const lines = changes.map((c) => `- \`${c.targetBranch}\`: ${c.result}${c.message ? ` (${c.message})` : ''}`);
  return { title: changes.some((c) => c.result === 'refused') ? 'Queue file partly applied' : 'Queue file applied', summary: `Applied from this commit:\n\n${lines.join('\n') || '- nothing to change'}` };
}
