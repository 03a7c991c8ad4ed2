import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config/env.js';
import { DEFAULT_RETRY_SCHEDULE_MS, retryDelay } from '../../src/webhooks/retry-schedule.js';
import { generateSigningSecret, SecretBox } from '../../src/webhooks/secret-box.js';
import { decodeWebhookSecretKey, loadWebhookSecretKey } from '../../src/webhooks/secret-key.js';
import { signDelivery } from '../../src/webhooks/signing.js';
import { isLive, previousSecretsExpireAt, rotateSecrets } from '../../src/webhooks/signing-secrets.js';
import { memoryLog } from './support.js';

/** Signing secrets: generated, sealed at rest, rotated; signatures verified by the stock library; retry waits. */

describe('signing', () => {
  const body = JSON.stringify({ type: 'pull_request.merged', pr_number: 7 });

  test('a generated secret is whsec_ with 32 random bytes, and the stock library verifies what we sign', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const headers = signDelivery({ messageId: 'evt_q_1_7', at: new Date(), body, secrets: [secret] });
    expect(headers['webhook-id']).toBe('evt_q_1_7');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  test('with several live secrets the header carries one v1 signature per secret, and each secret verifies alone', () => {
    const [a, b, c] = [generateSigningSecret(), generateSigningSecret(), generateSigningSecret()];
    const headers = signDelivery({ messageId: 'evt_q_2_7', at: new Date(), body, secrets: [a, b] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(a).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(b).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(c).verify(body, { ...headers })).toThrow(/No matching signature/);
    expect(() => new Webhook(a).verify(`${body} `, { ...headers })).toThrow();
  });
});

describe('SecretBox (AES-256-GCM)', () => {
  const box = new SecretBox(randomBytes(32));

  test('seals and opens; the sealed form does not contain the secret', () => {
    const secret = generateSigningSecret();
    const sealed = box.seal(secret, 'wh_1');
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(sealed).toMatch(/^v1\./);
    expect(box.open(sealed, 'wh_1')).toBe(secret);
    expect(box.seal(secret, 'wh_1')).not.toBe(sealed);
  });

  test('another key, another subscription (context) or a damaged value does not open', () => {
    const sealed = box.seal('whsec_abc', 'wh_1');
    expect(new SecretBox(randomBytes(32)).open(sealed, 'wh_1')).toBeNull();
    expect(box.open(sealed, 'wh_2')).toBeNull();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(box.open(parts.join('.'), 'wh_1')).toBeNull();
    expect(box.open('garbage', 'wh_1')).toBeNull();
  });

  test('a key must be 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('the key for secrets at rest', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mq-webhook-key-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('MQ_WEBHOOK_SECRET_KEY: 32 bytes of base64, used as given, no file, no warning', async () => {
    const key = randomBytes(32);
    const { lines, log } = memoryLog();
    const loaded = await loadWebhookSecretKey({ configured: key.toString('base64'), keyFile: join(dir, 'k'), log });
    expect(loaded.equals(key)).toBe(true);
    expect(lines).toEqual([]);
    await expect(stat(join(dir, 'k'))).rejects.toThrow();
    expect(decodeWebhookSecretKey(key.toString('base64url'))?.equals(key)).toBe(true);
    expect(decodeWebhookSecretKey(randomBytes(16).toString('base64'))).toBeNull();
    expect(decodeWebhookSecretKey('not base64!')).toBeNull();
    await expect(loadWebhookSecretKey({ configured: 'short', keyFile: join(dir, 'k'), log })).rejects.toThrow(/32 bytes/);
  });

  test('unset: a key file under .data/ is created once (mode 600) and reused, with a warning that never shows the key', async () => {
    const keyFile = join(dir, '.data', 'webhook-secret.key');
    const { lines, log } = memoryLog();
    const first = await loadWebhookSecretKey({ keyFile, log });
    const second = await loadWebhookSecretKey({ keyFile, log });
    expect(first.equals(second)).toBe(true);
    expect(((await stat(keyFile)).mode & 0o777).toString(8)).toBe('600');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/MQ_WEBHOOK_SECRET_KEY is not set/);
    for (const line of lines) {
      expect(line).not.toContain(first.toString('base64'));
      expect(line).not.toContain(first.toString('hex'));
    }
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(first.toString('base64'));
  });

  test('a damaged key file is an error, never silently replaced', async () => {
    const keyFile = join(dir, 'webhook-secret.key');
    await writeFile(keyFile, 'nope\n');
    await expect(loadWebhookSecretKey({ keyFile, log: memoryLog().log })).rejects.toThrow(/does not hold a 32-byte base64 key/);
  });

  test('configuration: a bad MQ_WEBHOOK_SECRET_KEY is refused without echoing it; the other webhook settings have defaults', () => {
    const bad = loadConfig({ MQ_WEBHOOK_SECRET_KEY: 'c2hvcnQ=' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.message).toContain('MQ_WEBHOOK_SECRET_KEY=(hidden)');
      expect(bad.message).not.toContain('c2hvcnQ=');
    }
    const defaults = loadConfig({});
    expect(defaults.ok && defaults.config).toMatchObject({ MQ_WEBHOOK_ALLOW_PRIVATE: false, MQ_WEBHOOK_TIMEOUT_MS: 10_000, MQ_WEBHOOK_POLL_MS: 1_000 });
    expect(defaults.ok && defaults.config.MQ_WEBHOOK_SECRET_KEY).toBeUndefined();
    const set = loadConfig({ MQ_WEBHOOK_ALLOW_PRIVATE: 'true', MQ_WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'), MQ_WEBHOOK_TIMEOUT_MS: '2500' });
    expect(set.ok && set.config).toMatchObject({ MQ_WEBHOOK_ALLOW_PRIVATE: true, MQ_WEBHOOK_TIMEOUT_MS: 2500 });
  });
});

describe('rotation of stored secrets', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
  const secret = (name: string, createdAt: Date, expiresAt: Date | null = null) => ({ sealed: name, createdAt, expiresAt });

  test('the current secret keeps signing until the grace period ends; older ones keep their own end; expired ones go', () => {
    const first = [secret('a', t0)];
    const second = rotateSecrets(first, secret('b', at(10)), at(10), 60 * 60_000);
    expect(second).toEqual([secret('b', at(10)), secret('a', t0, at(70))]);
    expect(previousSecretsExpireAt(second, at(10))).toEqual(at(70));
    const third = rotateSecrets(second, secret('c', at(20)), at(20), 30 * 60_000);
    expect(third).toEqual([secret('c', at(20)), secret('b', at(10), at(50)), secret('a', t0, at(70))]);
    const fourth = rotateSecrets(third, secret('d', at(80)), at(80), 0);
    expect(fourth).toEqual([secret('d', at(80))]);
    expect(isLive(secret('x', t0, at(5)), at(5))).toBe(false);
    expect(previousSecretsExpireAt(fourth, at(80))).toBeNull();
  });

  test('at most five secrets sign at once', () => {
    let secrets = [secret('s0', t0)];
    for (let i = 1; i <= 8; i++) secrets = rotateSecrets(secrets, secret(`s${i}`, at(i)), at(i), 24 * 60 * 60_000);
    expect(secrets.map((s) => s.sealed)).toEqual(['s8', 's7', 's6', 's5', 's4']);
  });
});

describe('retry waits', () => {
  test('the default schedule spans more than a day, then the delivery is dead', () => {
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(24 * 3_600_000);
    expect(retryDelay(1, DEFAULT_RETRY_SCHEDULE_MS, () => 0.5)).toBe(30_000);
    expect(retryDelay(9, DEFAULT_RETRY_SCHEDULE_MS, () => 0.5)).toBe(24 * 3_600_000);
    expect(retryDelay(10, DEFAULT_RETRY_SCHEDULE_MS, () => 0.5)).toBeNull();
  });

  test('jitter: within ±20 % of the step, decided by the injected random source', () => {
    expect(retryDelay(2, DEFAULT_RETRY_SCHEDULE_MS, () => 0)).toBe(96_000);
    expect(retryDelay(2, DEFAULT_RETRY_SCHEDULE_MS, () => 0.999999)).toBe(144_000);
    const waits = Array.from({ length: 200 }, () => retryDelay(3, DEFAULT_RETRY_SCHEDULE_MS, Math.random) ?? 0);
    for (const w of waits) {
      expect(w).toBeGreaterThanOrEqual(480_000);
      expect(w).toBeLessThanOrEqual(720_000);
    }
    expect(new Set(waits).size).toBeGreaterThan(1);
  });
});
