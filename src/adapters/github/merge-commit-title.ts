/**
 * Authors choose the title of their PR's merge commit with a line
 * `merge-commit-title: <title>` anywhere in the PR body, on its own line. The
 * key is matched without regard to case (people type it by hand); the title is
 * trimmed. The first such line with a non-empty title wins. Undefined: no such
 * line, and GitHub's default title is used.
 */
export function parseMergeCommitTitle(body: string | null | undefined): string | undefined {
  if (!body) return undefined;
  for (const line of body.split(/\r\n|\r|\n/)) {
    const match = /^\s*merge-commit-title\s*:(.*)$/i.exec(line);
    const title = match?.[1]?.trim();
    if (title) return title;
  }
  return undefined;
}
