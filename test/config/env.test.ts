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
