import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { stderrLog, type LocalDbLog } from './ferretdb-binary.js';

export interface StartFerretDbOptions {
  binaryPath: string;
  /** host:port to listen on; port 0 picks a free one. */
  address: string;
  /** SQLite directory, created if missing. */
  dataDir: string;
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. */
  stopGraceMs?: number;
  log?: LocalDbLog;
}

/** A running FerretDB child process: its URI (no database name) and how to stop it. */
export interface FerretDbProcess {
  uri: string;
  pid: number;
  /** SIGTERM, then SIGKILL after the grace period; idempotent. */
  stop(): Promise<void>;
}

/** The server did not come up; the message carries the tail of its stderr. */
export class FerretDbStartError extends Error {
  override name = 'FerretDbStartError';
  constructor(
    message: string,
    readonly stderrTail: string,
  ) {
    super(stderrTail ? `${message}\n--- ferretdb stderr (tail) ---\n${stderrTail}` : message);
  }
}

const STDERR_TAIL_CHARS = 4000;

export function startFerretDb(options: StartFerretDbOptions): Promise<FerretDbProcess> {
  const { binaryPath, address, dataDir, readyTimeoutMs = 30_000, stopGraceMs = 5_000, log = stderrLog } = options;
  const child = spawn(binaryPath, ['-listen', address, '-sqlite-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FERRETDB_TELEMETRY: 'disable', DO_NOT_TRACK: '1' },
    // Own process group: a terminal Ctrl-C must not kill the database under the
    // app's graceful shutdown; the parent-exit guard below stops it instead.
    detached: true,
  });
  let stderrTail = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  guardParentExit(child);
  let stopping: Promise<void> | undefined;

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new FerretDbStartError(`The local FerretDB server (${binaryPath}) ${reason}`, stderrTail.trim()));
    };
    const timer = setTimeout(() => fail(`printed no READY line within ${readyTimeoutMs} ms`), readyTimeoutMs);

    child.once('error', (error) => fail(`could not be started: ${error.message}`));
    child.once('exit', (code, signal) => {
      if (!settled) fail(`exited before it was ready (code ${code}, signal ${signal})`);
      else if (!stopping) {
        log.warn(`The local FerretDB server exited unexpectedly (code ${code}, signal ${signal}):\n${stderrTail.trim()}`);
      }
    });

    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^READY (mongodb:\/\/\S+)$/.exec(line.trim());
      if (!match || settled) return;
      settled = true;
      clearTimeout(timer);
      // Let the parent exit on its own when nothing else keeps it alive; the
      // exit guard then takes the server down with it.
      child.unref();
      (child.stdout as Socket | null)?.unref();
      (child.stderr as Socket | null)?.unref();
      resolve({
        uri: match[1]!,
        pid: child.pid!,
        stop: () => (stopping ??= stopChild(child, exited, stopGraceMs)),
      });
    });
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
  const timedOut = await Promise.race([exited.then(() => false), gaveUp]);
  clearTimeout(timer);
  if (timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}

// One registry for all children, so the "are we the only signal listener"
// test below is not confused by our own listeners.
const liveChildren = new Set<ChildProcess>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function guardParentExit(child: ChildProcess): void {
  if (liveChildren.size === 0) {
    process.on('exit', killAll);
    for (const signal of SIGNALS) process.on(signal, onSignal);
  }
  liveChildren.add(child);
  const forget = () => {
    liveChildren.delete(child);
    if (liveChildren.size === 0) removeGuards();
  };
  child.once('exit', forget);
  child.once('error', forget);
}

function killAll(): void {
  for (const child of liveChildren) child.kill('SIGTERM');
}

function removeGuards(): void {
  process.off('exit', killAll);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

function onSignal(signal: NodeJS.Signals): void {
  // If the app has its own handler it owns shutdown (and will stop us or exit,
  // which fires 'exit'). If ours is the only one, our listener has disabled
  // Node's default "terminate": kill the children and re-raise to restore it.
  if (process.listenerCount(signal) > 1) return;
  killAll();
  removeGuards();
  process.kill(process.pid, signal);
}
