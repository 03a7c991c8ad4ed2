/**
 * What the server says (PR titles, check names, messages) reaches the
 * terminal without control characters: an escape sequence in a PR title could
 * clear the screen or rewrite what was printed before (found by review).
 */
import { printable, runCli } from '../../src/cli/run-cli.js';

test('control characters are shown as U+FFFD; tabs, newlines and other text stay', () => {
  expect(printable('Fix \u001b[2Jthe build\u0007 \u009b31m')).toBe('Fix \ufffd[2Jthe build\ufffd \ufffd31m');
  expect(printable('a\tb\nc — ünïcode ✓')).toBe('a\tb\nc — ünïcode ✓');
});

test('every line the CLI writes goes through it, its own errors included', async () => {
  const lines: string[] = [];
  const code = await runCli(['\u001b[2Jqueues'], { MQ_CONFIG_DIR: '/nonexistent' }, { stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) });
  expect(code).not.toBe(0);
  expect(lines.join('\n')).not.toContain('\u001b');
  expect(lines.join('\n')).toContain('\ufffd[2Jqueues');
});

test('JSON keeps its data: DEL and C1 are escaped, not replaced, so a script parses what the API answered (found by review)', () => {
  const answer = JSON.stringify({ title: 'Fix \u009b31m the \u007f build', note: 'line\nbreak' });
  const shown = printable(answer);
  expect(shown).not.toMatch(/[\u007f-\u009f]/);
  expect(JSON.parse(shown)).toEqual({ title: 'Fix \u009b31m the \u007f build', note: 'line\nbreak' });
  // Not JSON: replaced as before.
  expect(printable('{ not json \u009b')).toBe('{ not json \ufffd');
});
