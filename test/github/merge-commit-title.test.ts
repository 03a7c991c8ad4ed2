import { parseMergeCommitTitle } from '../../src/adapters/github/merge-commit-title.js';

describe('parseMergeCommitTitle', () => {
  test.each([
    ['the only line', 'merge-commit-title: Add the thing', 'Add the thing'],
    ['anywhere in the body', 'Intro.\n\nmerge-commit-title: Fix the parser\n\nMore text.', 'Fix the parser'],
    ['trimmed', 'merge-commit-title:    Spaces around   ', 'Spaces around'],
    ['whitespace around the line', '   merge-commit-title: Indented  ', 'Indented'],
    ['key in any case', 'Merge-Commit-Title: Capitals', 'Capitals'],
    ['space before the colon', 'MERGE-COMMIT-TITLE : Shouty', 'Shouty'],
    ['CRLF line ends', 'Intro\r\nmerge-commit-title: Windows line\r\nrest', 'Windows line'],
    ['CR line ends', 'Intro\rmerge-commit-title: Old Mac\rrest', 'Old Mac'],
    ['the first of several', 'merge-commit-title: First\nmerge-commit-title: Second', 'First'],
    ['an empty title skipped for a later one', 'merge-commit-title:   \nmerge-commit-title: Real', 'Real'],
    ['colons in the title kept', 'merge-commit-title: feat: a: b', 'feat: a: b'],
  ])('%s', (_name, body, title) => {
    expect(parseMergeCommitTitle(body)).toBe(title);
  });

  test.each([
    ['no body', null],
    ['undefined body', undefined],
    ['empty body', ''],
    ['no such line', 'Just a description.'],
    ['not on its own line', 'Please use merge-commit-title: Not this'],
    ['empty title', 'merge-commit-title:'],
    ['another key', 'merge-commit-titles: plural'],
  ])('none: %s', (_name, body) => {
    expect(parseMergeCommitTitle(body)).toBeUndefined();
  });
});
