/** Texts the app writes on PRs outside the queue's own status (see the GitHub host for those). */
export function noQueueComment(baseBranch: string): string {
  return [
    `There is no merge queue for \`${baseBranch}\` in this repository, so this pull request was not queued.`,
    `A queue is created by naming the branch under \`queues:\` in \`.github/merge-queue.yml\` on the default branch (or with the \`createQueue\` API call); or retarget the pull request to a branch that has a queue.`,
  ].join('\n\n');
}

/** A reply to a command or label that could not be carried out. */
export function replyTo(message: string): string {
  return `:warning: Merge queue: ${message}`;
}

/** A `/mq merge` refused because the PR changed after the command (a push among what may have): what was approved is not known for sure. */
export function changedAfterCommand(headSha: string): string {
  return `this pull request changed after your \`/mq merge\` (GitHub says it was updated since: a push, a label, a comment...; its head is now ${headSha.slice(0, 7)}), so it was not queued: the queue lands only the head a command was given for. Comment \`/mq merge\` again to queue the head it has now.`;
}
