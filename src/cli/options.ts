import type { Command } from 'commander';
import { usageError } from './cli-error.js';
import type { Env } from './credentials.js';

/** A queue as every v1 queue and PR request names it. */
export interface QueueRef {
  repo: { host: string; owner: string; name: string };
  targetBranch: string;
}

export interface QueueOptions {
  repo?: string;
  host?: string;
  branch?: string;
}

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$/;
// eslint-disable-next-line no-control-regex
const SEGMENT = /^[^\s/\\\u0000-\u001f\u007f]{1,100}$/;
const DEFAULT_HOST = 'github.com';
const DEFAULT_BRANCH = 'main';

/** --url, --token and --json, on every command that talks to the service. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the service, e.g. https://mq.example.com (default: MQ_URL, else the last `mq login`, else http://127.0.0.1:3000)')
    .option('--token <token>', 'an organization token (default: MQ_TOKEN, else the one `mq login` saved for the URL)')
    .option('--json', "print the API's JSON answer as is");
}

/** --repo, --host and --branch, on every command about one queue. */
export function withQueueOptions(command: Command): Command {
  return command
    .option('--repo <repo>', 'owner/name or host/owner/name (default: MQ_REPO)')
    .option('--host <host>', `repository host when --repo is owner/name (default: ${DEFAULT_HOST})`)
    .option('--branch <branch>', `target branch of the queue (default: MQ_BRANCH, else ${DEFAULT_BRANCH})`);
}

/**
 * The queue a command is about: `--repo` (or MQ_REPO) as owner/name with
 * `--host`, as host/owner/name, or as a repository URL; `--branch` (or
 * MQ_BRANCH, else main).
 */
export function resolveQueue(opts: QueueOptions, env: Env): QueueRef {
  const raw = (opts.repo ?? env.MQ_REPO ?? '').trim();
  if (!raw) throw usageError('which queue? pass --repo owner/name (or host/owner/name), or set MQ_REPO');
  const path = raw.replace(/^https?:\/\//, '').replace(/\.git$/, '').replace(/\/+$/, '');
  const parts = path.split('/');
  let host: string;
  let owner: string | undefined;
  let name: string | undefined;
  if (parts.length === 2) {
    host = opts.host ?? DEFAULT_HOST;
    [owner, name] = parts;
  } else if (parts.length === 3) {
    host = parts[0] as string;
    [, owner, name] = parts;
    if (opts.host && opts.host.toLowerCase() !== host.toLowerCase()) throw usageError(`--repo ${raw} names host ${host} but --host says ${opts.host}`);
  } else {
    throw usageError(`--repo ${raw} must be owner/name or host/owner/name`);
  }
  if (!HOST.test(host)) throw usageError(`${host} is not a host name such as github.com`);
  if (!owner || !SEGMENT.test(owner) || !name || !SEGMENT.test(name)) throw usageError(`--repo ${raw} must be owner/name or host/owner/name`);
  const targetBranch = (opts.branch ?? env.MQ_BRANCH ?? DEFAULT_BRANCH).trim();
  if (!targetBranch) throw usageError('--branch must not be empty');
  return { repo: { host: host.toLowerCase(), owner, name }, targetBranch };
}

/** "acme/widgets main", with the host when it is not github.com: the form --repo accepts, then the branch. */
export function queueLabel(queue: { repo: { host: string; owner: string; name: string }; targetBranch: string }): string {
  return `${repoLabel(queue.repo)} ${queue.targetBranch}`;
}

export function repoLabel(repo: { host: string; owner: string; name: string }): string {
  return `${repo.host === DEFAULT_HOST ? '' : `${repo.host}/`}${repo.owner}/${repo.name}`;
}

/** A PR number as people type it: "42" or "#42". */
export function parsePrNumber(raw: string): number {
  const match = /^#?(\d{1,10})$/.exec(raw.trim());
  const number = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(number) || number < 1 || number > 2147483647) throw usageError(`${raw} is not a pull request number such as 42`);
  return number;
}
