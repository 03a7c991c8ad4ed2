/**
 * Replicas started together on a fresh checkout share one webhook secret key file, created by whichever starts
 * first. Seen in CI: created with 'wx' and then written, the file was once read empty by a replica starting beside
 * the one creating it, which stopped ("does not hold a 32-byte base64 key"). Processes, because the window is
 * between two processes' file operations (`npm test` builds dist/ first).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const secretKeyJs = join(root, 'dist', 'webhooks', 'secret-key.js');
/** One process: loads (or creates) the key and prints it, or ERR and the message. */
const loadOnce = `const { loadWebhookSecretKey } = await import(${JSON.stringify(pathToFileURL(secretKeyJs).href)});
try { process.stdout.write((await loadWebhookSecretKey({ keyFile: process.argv[1], log: { warn() {} } })).toString('base64')); }
catch (error) { process.stdout.write('ERR ' + error.message); }`;

function loadIn(keyFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', loadOnce, keyFile]);
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(out)); // Not 'exit': its output may not all be read yet.
  });
}

test('processes that start together on a fresh checkout all load the one key the first of them created', async () => {
  if (!existsSync(secretKeyJs)) throw new Error('dist/ is missing: run `npm run build` (npm test does) before these tests');
  const dir = await mkdtemp(join(tmpdir(), 'mq-key-file-'));
  try {
    // Before the fix, about one round in fifteen of eight processes had one read the file empty.
    for (let round = 0; round < 20; round++) {
      const keyFile = join(dir, `r${round}`, 'webhook-secret.key');
      const keys = await Promise.all(Array.from({ length: 8 }, () => loadIn(keyFile)));
      expect(keys.filter((k) => !/^[A-Za-z0-9+/]{43}=$/.test(k))).toEqual([]);
      expect(new Set(keys).size).toBe(1);
      expect(await readdir(dirname(keyFile))).toEqual(['webhook-secret.key']); // No draft left behind.
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
