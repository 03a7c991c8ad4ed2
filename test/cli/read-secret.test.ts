/**
 * A token piped into `mq login`: read to its end, or given up on when nothing comes (found by a review of the CLI: a
 * pipe nobody writes to, as over ssh, `docker compose exec -T` or some CI runners, hung for ever).
 */
import { PassThrough } from 'node:stream';
import { readSecret } from '../../src/cli/read-secret.js';

const asStdin = (stream: PassThrough) => stream as unknown as NodeJS.ReadStream;
const quiet = { write: () => true } as unknown as NodeJS.WriteStream;

test('what is piped in is read to its end, trimmed', async () => {
  const input = new PassThrough();
  const read = readSecret('Token: ', asStdin(input), quiet, 1_000);
  input.write('mq_abc');
  input.end('def\n');
  expect(await read).toBe('mq_abcdef');
});

test('a pipe nothing is written to is given up on: an empty answer (mq login then says there is no token)', async () => {
  const input = new PassThrough();
  const started = Date.now();
  expect(await readSecret('Token: ', asStdin(input), quiet, 50)).toBe('');
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(input.destroyed).toBe(true);
});

test('a slow writer is waited for once it has started', async () => {
  const input = new PassThrough();
  const read = readSecret('Token: ', asStdin(input), quiet, 50);
  input.write('mq_');
  await new Promise((resolve) => setTimeout(resolve, 120));
  input.end('slow');
  expect(await read).toBe('mq_slow');
});

test('typed at a prompt: Enter ends it, Ctrl-C stops the command with exit code 130 (found by review: it answered "no token")', async () => {
  const terminal = () => Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined }) as unknown as NodeJS.ReadStream & PassThrough;
  const typed = terminal();
  const read = readSecret('Token: ', typed, quiet);
  typed.write('mq_x\u007fyz\r');
  expect(await read).toBe('mq_yz');
  const stopped = terminal();
  const interrupted = readSecret('Token: ', stopped, quiet);
  stopped.write('mq_ab\u0003');
  await expect(interrupted).rejects.toMatchObject({ exitCode: 130 });
});
