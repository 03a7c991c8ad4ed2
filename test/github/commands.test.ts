import { parseComment } from '../../src/github/commands.js';

test.each([
  ['/mq merge', { kind: 'merge', noBatch: false }],
  ['/MQ Merge --priority=HIGH', { kind: 'merge', priority: 10, noBatch: false }],
  ['/mq merge --priority=0 --no-batch', { kind: 'merge', priority: 0, noBatch: true }],
  ['  /mq merge --priority=255\nthanks!', { kind: 'merge', priority: 255, noBatch: false }],
  ['/mq cancel', { kind: 'cancel' }],
  ['/mq restart\r\n', { kind: 'restart' }],
])('%j is a command', (body, command) => {
  expect(parseComment(body)).toEqual({ kind: 'command', command });
});

test.each([
  ['/mq merge --priority=256', /not a priority/],
  ['/mq merge --priority=asap', /not a priority/],
  // Names of Object.prototype are no priority names (a stored function made the queue's views fail).
  ['/mq merge --priority=constructor', /not a priority/],
  ['/mq merge --priority=__proto__', /not a priority/],
  ['/mq merge --priority=tostring', /not a priority/],
  ['/mq merge --fast', /Unknown option `--fast`/],
  ['/mq deploy', /Unknown command `\/mq deploy`/],
  ['/mq cancel now', /takes no options/],
  ['/mq', /Unknown command/],
])('%j is refused with a message that says how to use it', (body, message) => {
  const parsed = parseComment(body);
  expect(parsed.kind).toBe('invalid');
  if (parsed.kind === 'invalid') {
    expect(parsed.message).toMatch(message);
    expect(parsed.message).toMatch(/Usage|priority/);
  }
});

test.each(['LGTM', 'please run /mq merge', '> /mq merge\nquoted', '/mqmerge', ''])('%j is not addressed to the queue', (body) => {
  expect(parseComment(body)).toEqual({ kind: 'none' });
});

/** The text of a Markdown line outside its inline code spans (CommonMark: a run of n backticks closes at the next run of exactly n). */
function outsideCodeSpans(md: string): string {
  let out = '';
  let i = 0;
  while (i < md.length) {
    if (md[i] !== '`') {
      out += md[i++];
      continue;
    }
    let j = i;
    while (md[j] === '`') j++;
    let k = j;
    let closed = -1;
    while (k < md.length) {
      if (md[k] !== '`') {
        k++;
        continue;
      }
      let m = k;
      while (md[m] === '`') m++;
      if (m - k === j - i) {
        closed = m;
        break;
      }
      k = m;
    }
    if (closed === -1) {
      out += md.slice(i, j);
      i = j;
    } else i = closed;
  }
  return out;
}

// Found by review: the echoed word closed its code span, so the App's own reply carried the commenter's link or mention.
test.each([
  '/mq x`[sign in again](https://evil.example/login)`',
  '/mq x`@acme/everyone`',
  '/mq merge --x``[a](https://evil.example)``',
  '/mq merge --priority=`@acme/everyone`',
  '/mq merge --priority=```[a](https://evil.example)',
])('%j is answered with the word inside its code span, whatever backticks it holds', (body) => {
  const parsed = parseComment(body);
  expect(parsed.kind).toBe('invalid');
  const message = (parsed as { message: string }).message;
  const outside = outsideCodeSpans(message);
  expect(outside).not.toContain('evil.example');
  expect(outside).not.toContain('@acme');
  expect(outside).toMatch(/Unknown command|Unknown option|is not a priority/);
});

test('a long word is echoed cut short', () => {
  const parsed = parseComment(`/mq ${'x'.repeat(500)}`);
  expect((parsed as { message: string }).message.length).toBeLessThan(250);
});
