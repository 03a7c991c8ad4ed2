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
