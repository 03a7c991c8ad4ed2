import Fastify from 'fastify';
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/logger.js';

/** A destination that keeps what the logger writes. */
function capture(): { destination: { write(chunk: string): void }; text: () => string } {
  const chunks: string[] = [];
  return { destination: { write: (chunk: string) => void chunks.push(chunk) }, text: () => chunks.join('') };
}

/** A colour escape sequence (ESC [ … m). */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

describe('log format', () => {
  test('json: one JSON object a line, with level, message and fields', () => {
    const out = capture();
    const log = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, { destination: out.destination, isTTY: true });
    log.info({ queue: 'q1' }, 'queue resumed');
    log.warn('lease lost');
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'queue resumed', queue: 'q1' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 40, msg: 'lease lost' });
  });

  test('pretty: human lines with the level name and the message, not JSON', () => {
    const out = capture();
    const log = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, { destination: out.destination, isTTY: false });
    log.info({ queue: 'q1' }, 'queue resumed');
    log.error('no database');
    const text = out.text();
    expect(text).not.toMatch(/^\s*\{/m);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: queue resumed$/m);
    expect(text).toMatch(/queue: "q1"/);
    expect(text).toMatch(/ERROR: no database/);
    // pid and hostname are noise on a terminal.
    expect(text).not.toMatch(/pid|hostname/);
    // Not a terminal: no colour codes in a forced-pretty file or pipe.
    expect(text).not.toMatch(ANSI);
  });

  test('pretty on a terminal is coloured', () => {
    const out = capture();
    createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, { destination: out.destination, isTTY: true }).info('hello');
    expect(out.text()).toMatch(ANSI);
    expect(out.text().replace(ANSI, '')).toMatch(/INFO.*: hello/);
  });

  test('LOG_FORMAT unset follows the terminal: pretty on a TTY, JSON otherwise', () => {
    const tty = capture();
    createLogger({ LOG_LEVEL: 'info' }, { destination: tty.destination, isTTY: true }).info('on a terminal');
    expect(tty.text()).not.toMatch(/^\{/);
    expect(tty.text().replace(ANSI, '')).toMatch(/INFO.*: on a terminal/);

    const pipe = capture();
    createLogger({ LOG_LEVEL: 'info' }, { destination: pipe.destination, isTTY: false }).info('in a pipe');
    expect(JSON.parse(pipe.text())).toMatchObject({ msg: 'in a pipe' });
  });

  test('LOG_LEVEL still filters in both formats', () => {
    for (const LOG_FORMAT of ['json', 'pretty'] as const) {
      const out = capture();
      const log = createLogger({ LOG_LEVEL: 'warn', LOG_FORMAT }, { destination: out.destination, isTTY: false });
      log.info('hidden');
      log.warn('shown');
      expect(out.text()).not.toContain('hidden');
      expect(out.text()).toContain('shown');
    }
  });
});

describe('LOG_FORMAT in the configuration', () => {
  test('json, pretty or unset', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' })).toMatchObject({ ok: true, config: { LOG_FORMAT: 'json' } });
    expect(loadConfig({ LOG_FORMAT: 'pretty' })).toMatchObject({ ok: true, config: { LOG_FORMAT: 'pretty' } });
    const unset = loadConfig({ LOG_FORMAT: '' });
    expect(unset.ok && unset.config.LOG_FORMAT).toBeUndefined();
  });

  test('anything else is refused with a message naming the variable', () => {
    const result = loadConfig({ LOG_FORMAT: 'colour' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/LOG_FORMAT="colour".*json.*pretty/);
  });
});

describe('redaction in both formats', () => {
  const SECRETS = {
    token: 'mq_tok_SECRET_0001',
    cookie: 'mq_session=SESSION_SECRET_0002',
    csrf: 'CSRF_SECRET_0003',
    setCookie: 'mq_session=SETCOOKIE_SECRET_0004; HttpOnly',
    authorization: 'Bearer OPERATOR_SECRET_0005',
  };

  function expectNoSecrets(text: string): void {
    // Every secret above carries this marker; none may reach the output.
    expect(text).not.toContain('SECRET_000');
  }

  test.each(['json', 'pretty'] as const)('%s: a logged request and response show none of the secrets', (LOG_FORMAT) => {
    const out = capture();
    const log = createLogger({ LOG_LEVEL: 'info', LOG_FORMAT }, { destination: out.destination, isTTY: LOG_FORMAT === 'pretty' });
    log.info(
      {
        req: {
          method: 'POST',
          url: '/v1/getQueue',
          headers: { 'x-api-token': SECRETS.token, cookie: SECRETS.cookie, 'x-csrf-token': SECRETS.csrf, authorization: SECRETS.authorization, 'user-agent': 'jest' },
        },
        res: { statusCode: 200, headers: { 'set-cookie': SECRETS.setCookie, 'content-type': 'application/json' } },
      },
      'request completed',
    );
    log.warn({ headers: { 'x-api-token': SECRETS.token } }, 'outgoing call');
    const text = out.text();
    expectNoSecrets(text);
    expect(text.match(/\[redacted\]/g)).toHaveLength(6);
    // What is not secret is still there.
    expect(text).toContain('/v1/getQueue');
    expect(text).toContain('jest');
    expect(text).toContain('application/json');
  });

  test.each(['json', 'pretty'] as const)('%s: Fastify request logs through the logger leak none of them', async (LOG_FORMAT) => {
    const out = capture();
    const log = createLogger({ LOG_LEVEL: 'trace', LOG_FORMAT }, { destination: out.destination, isTTY: false });
    const app = Fastify({ loggerInstance: log });
    app.post('/echo', async (request, reply) => {
      // Fastify's req/res serializers keep no headers; the logger's redaction is the second line.
      request.log.info({ req: request, res: reply }, 'handled');
      return reply.header('set-cookie', SECRETS.setCookie).send({ ok: true });
    });
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'x-api-token': SECRETS.token, cookie: SECRETS.cookie, 'x-csrf-token': SECRETS.csrf, authorization: SECRETS.authorization },
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    await app.close();
    const text = out.text();
    expect(text).toContain('handled');
    expect(text).toContain('/echo');
    expectNoSecrets(text);
  });
});
