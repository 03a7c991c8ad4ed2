import { CliError } from './cli-error.js';

/**
 * Piped in, a secret must start to arrive within this long: a pipe nobody writes to (ssh, `exec -T`, CI) would hang;
 * a password manager piping it may ask its own question first (`op read ... | mq login`), so a minute.
 */
const PIPE_WAIT_MS = 60_000;
/** A shell's exit code for a command stopped by Ctrl-C. */
const INTERRUPTED = 130;

/**
 * A secret from stdin: typed at a prompt without echo when stdin is a terminal,
 * else everything piped in (`echo "$TOKEN" | mq login --url ...`); '' when nothing
 * is piped in time. Ctrl-C at the prompt stops the command (exit 130).
 */
export async function readSecret(prompt: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr, pipeWaitMs = PIPE_WAIT_MS): Promise<string> {
  if (!input.isTTY) return readPiped(input, pipeWaitMs);
  output.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const stopReading = () => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      output.write('\n');
    };
    const finish = (value: string) => {
      stopReading();
      resolve(value);
    };
    const onData = (data: string) => {
      for (const char of data) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(typed.trim());
        if (char === '\u0003') {
          // Rejected, not resolved empty: the command stops as Ctrl-C stops any (found by review: it said "no token").
          stopReading();
          return reject(new CliError('', INTERRUPTED));
        }
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}

/** Everything piped in, or '' when nothing started to arrive within `waitMs` (the stream is then left alone). */
function readPiped(input: NodeJS.ReadStream, waitMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Nothing came: the stream is let go (a pipe left open would keep the process alive).
    const timer = setTimeout(() => {
      done('');
      input.destroy();
    }, waitMs);
    const done = (value: string) => {
      clearTimeout(timer);
      input.off('data', onData).off('end', onEnd).off('error', onError);
      input.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      clearTimeout(timer);
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    };
    const onEnd = () => done(Buffer.concat(chunks).toString('utf8').trim());
    const onError = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    input.on('data', onData).on('end', onEnd).on('error', onError);
    input.resume();
  });
}
