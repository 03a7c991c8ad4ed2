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
