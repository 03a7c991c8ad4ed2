import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadConfig } from '../../src/config/env.js';

describe('loadConfig', () => {
  test('defaults: port 3000 on loopback, info logs, no database URI, no GitHub App', () => {
    const result = loadConfig({});
    expect(result).toEqual({
      ok: true,
      config: expect.objectContaining({ PORT: 3000, HOST: '127.0.0.1', LOG_LEVEL: 'info', MQ_LOCAL_DB_PORT: 27217 }),
    });
    if (!result.ok) throw new Error('unreachable');
    expect(result.config.MONGODB_URI).toBeUndefined();
    expect(result.config.APP_ID).toBeUndefined();
  });

  test('reads and converts the variables it knows', () => {
    const result = loadConfig({ PORT: '8080', HOST: '0.0.0.0', MONGODB_URI: 'mongodb+srv://u:p@c.example/mq', LOG_LEVEL: 'debug', APP_ID: '123', PRIVATE_KEY: 'k', WEBHOOK_SECRET: 's' });
    expect(result).toEqual({
      ok: true,
      config: expect.objectContaining({ PORT: 8080, HOST: '0.0.0.0', MONGODB_URI: 'mongodb+srv://u:p@c.example/mq', LOG_LEVEL: 'debug', APP_ID: '123' }),
    });
  });

  test('empty optional variables count as unset', () => {
    const result = loadConfig({ MONGODB_URI: '', APP_ID: ' ' });
    expect(result.ok && result.config.MONGODB_URI).toBeUndefined();
    expect(result.ok && result.config.APP_ID).toBeUndefined();
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['MONGODB_URI', 'http://example.com'],
    ['LOG_LEVEL', 'loud'],
    ['APP_ID', 'my-app'],
    ['MQ_LOCAL_DB_PORT', '0'],
    ['LOG_FORMAT', 'xml'],
  ])('a bad %s=%s is an error naming the variable', (variable, value) => {
    const result = loadConfig({ [variable]: value });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain(variable);
  });

  test('secrets are never echoed in the error', () => {
    // A PRIVATE_KEY that fails nothing else still must not be printed by any error path.
    const result = loadConfig({ PRIVATE_KEY: '-----BEGIN KEY-----secret', PORT: 'x' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).not.toContain('secret');
    // A secret that is itself invalid is named, never shown.
    const badKey = loadConfig({ MQ_WEBHOOK_SECRET_KEY: 'not-base64-secret-value' });
    expect(badKey.ok).toBe(false);
    if (!badKey.ok) {
      expect(badKey.message).toContain('MQ_WEBHOOK_SECRET_KEY');
      expect(badKey.message).not.toContain('not-base64-secret-value');
    }
  });

  test.each([
    ['MQ_OPERATOR_TOKEN', 'hunter2-secret'],
    ['MONGODB_URI', 'mongo+srv://admin:S3cretPass@cluster0.example.net/mq'],
    ['GITHUB_API_URL', 'ftp://user:S3cretPass@ghe.example/api'],
  ])('a bad %s is named, never shown: tokens and URLs can hold credentials', (variable, value) => {
    const result = loadConfig({ [variable]: value });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain(`${variable}=(hidden)`);
    expect(result.message).not.toContain(value.includes('S3cretPass') ? 'S3cretPass' : value);
  });

  test('a harmless bad value is shown, so the operator sees what was read', () => {
    const result = loadConfig({ PORT: 'eighty' });
    expect(!result.ok && result.message).toContain('PORT="eighty"');
  });
});

describe('the GitHub App variables', () => {
  test('all three or none: half a configuration names what is missing', () => {
    const result = loadConfig({ APP_ID: '123', WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/PRIVATE_KEY must be set/);
    expect(loadConfig({ APP_ID: '1', PRIVATE_KEY: 'k', WEBHOOK_SECRET: 's' }).ok).toBe(true);
    expect(loadConfig({}).ok).toBe(true);
  });
});

describe('PRIVATE_KEY_PATH (Probot\'s convention)', () => {
  const { privateKey: pem } = generateKeyPairSync('rsa', { modulusLength: 1024, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  let dir: string;
  let keyFile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mq-env-'));
    keyFile = join(dir, 'app.private-key.pem');
    writeFileSync(keyFile, pem);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the file is read and stands for PRIVATE_KEY with APP_ID and WEBHOOK_SECRET', () => {
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: keyFile, WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.PRIVATE_KEY).toBe(pem);
    expect(result.warnings).toBeUndefined();
  });

  test('a relative path is taken from the working directory', () => {
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: relative(process.cwd(), keyFile), WEBHOOK_SECRET: 's' });
    expect(result.ok && result.config.PRIVATE_KEY).toBe(pem);
  });

  test('a PKCS#8 key is a PEM too', () => {
    const { privateKey: pkcs8 } = generateKeyPairSync('rsa', { modulusLength: 1024, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const file = join(dir, 'pkcs8.pem');
    writeFileSync(file, pkcs8);
    expect(loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: file, WEBHOOK_SECRET: 's' }).ok).toBe(true);
  });

  test('it still needs APP_ID and WEBHOOK_SECRET, and they need a key', () => {
    const alone = loadConfig({ PRIVATE_KEY_PATH: keyFile });
    expect(alone.ok).toBe(false);
    if (!alone.ok) expect(alone.message).toMatch(/APP_ID, WEBHOOK_SECRET must be set too/);
    const noKey = loadConfig({ APP_ID: '1', WEBHOOK_SECRET: 's' });
    expect(noKey.ok).toBe(false);
    if (!noKey.ok) expect(noKey.message).toMatch(/PRIVATE_KEY must be set too.*PRIVATE_KEY_PATH/);
  });

  test('a missing file is an error naming the variable and the path', () => {
    const missing = join(dir, 'nope.pem');
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: missing, WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain(`PRIVATE_KEY_PATH=${JSON.stringify(missing)}: no such file`);
  });

  test('a directory is an error naming the variable', () => {
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: dir, WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/PRIVATE_KEY_PATH=.*a directory/);
  });

  test('a file that is not a PEM private key is an error that does not show its content', () => {
    const notPem = join(dir, 'public.pem');
    writeFileSync(notPem, 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC-not-a-private-key user@host\n');
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY_PATH: notPem, WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toMatch(/PRIVATE_KEY_PATH=.*not a PEM private key/);
    expect(result.message).not.toContain('AAAAB3NzaC1yc2E');
  });

  test('PRIVATE_KEY wins over PRIVATE_KEY_PATH, as in Probot, with a warning; the file is not read', () => {
    const result = loadConfig({ APP_ID: '1', PRIVATE_KEY: 'from-env', PRIVATE_KEY_PATH: join(dir, 'does-not-exist.pem'), WEBHOOK_SECRET: 's' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.PRIVATE_KEY).toBe('from-env');
    expect(result.warnings).toEqual([expect.stringMatching(/PRIVATE_KEY is used, PRIVATE_KEY_PATH is ignored/)]);
  });
});
