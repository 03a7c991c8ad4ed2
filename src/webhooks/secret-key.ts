import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SecretBox } from './secret-box.js';

/** Decodes MQ_WEBHOOK_SECRET_KEY: base64 of exactly 32 bytes, or null. */
export function decodeWebhookSecretKey(value: string): Buffer | null {
  const trimmed = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, /[-_]/.test(trimmed) ? 'base64url' : 'base64');
  return key.length === SecretBox.KEY_BYTES ? key : null;
}

/**
 * The key that seals webhook signing secrets: MQ_WEBHOOK_SECRET_KEY when set.
 * Otherwise (local runs) a random key kept in `keyFile`, created on first use,
 * with a warning: losing that file makes every stored secret unusable. The key
 * itself is never logged.
 */
export async function loadWebhookSecretKey(options: {
  configured?: string;
  keyFile: string;
  log: { warn(details: object, message: string): void };
}): Promise<Buffer> {
  if (options.configured !== undefined) {
    const key = decodeWebhookSecretKey(options.configured);
    if (!key) throw new Error('MQ_WEBHOOK_SECRET_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`).');
    return key;
  }
  const key = (await readKeyFile(options.keyFile)) ?? (await createKeyFile(options.keyFile));
  options.log.warn(
    { keyFile: options.keyFile },
    'MQ_WEBHOOK_SECRET_KEY is not set: webhook signing secrets are encrypted with a key kept in this local file; set MQ_WEBHOOK_SECRET_KEY for any shared or production deployment',
  );
  return key;
}

async function readKeyFile(path: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return null;
    throw error;
  }
  const key = decodeWebhookSecretKey(text);
  if (!key) throw new Error(`${path} does not hold a 32-byte base64 key; restore it or set MQ_WEBHOOK_SECRET_KEY.`);
  return key;
}

async function createKeyFile(path: string): Promise<Buffer> {
  await mkdir(dirname(path), { recursive: true });
  const key = randomBytes(SecretBox.KEY_BYTES);
  // Written whole under a name of its own, then linked into place: the link fails if the file exists, so processes
  // starting together keep whichever key was linked first, and none reads the file half written (created with 'wx'
  // and then written, a replica starting beside the one creating it once read it empty and stopped).
  const draft = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(draft, path);
    return key;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    const existing = await readKeyFile(path);
    if (!existing) throw error;
    return existing;
  } finally {
    await unlink(draft).catch(() => undefined);
  }
}
