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
