import fc from 'fast-check';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postDelivery } from '../../src/webhooks/post-delivery.js';
import type { SignedHeaders } from '../../src/webhooks/signing.js';
import { checkUrlShape, checkWebhookUrl, nonPublicReason } from '../../src/webhooks/url-safety.js';

/** Which addresses a webhook may reach: public only, unless the operator allows private ones; a delivery connects to the addresses checked. */

describe('nonPublicReason', () => {
  test.each([
    // IPv4 loopback, private, link-local (metadata), CGNAT, unspecified, multicast, broadcast, reserved
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.0.0.1', /private/],
    ['10.255.255.255', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local.*metadata/],
    ['169.254.0.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['192.0.2.10', /reserved/],
    ['198.18.0.1', /reserved/],
    ['240.0.0.1', /reserved/],
    // IPv6
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf:ffff::1', /link-local/],
    ['fc00::1', /unique local/],
    ['fd12:3456:789a::1', /unique local/],
    ['ff02::1', /multicast/],
    ['fec0::1', /site-local/],
    ['2001:db8::1', /reserved/],
    // IPv4-mapped and other IPv6 forms carrying a private IPv4 address
    ['::ffff:127.0.0.1', /loopback.*IPv4-mapped/],
    ['::ffff:7f00:1', /loopback.*IPv4-mapped/],
    ['::ffff:10.1.2.3', /private.*IPv4-mapped/],
    ['::ffff:169.254.169.254', /link-local.*IPv4-mapped/],
    ['::ffff:192.168.0.1', /private/],
    ['::ffff:100.64.0.1', /carrier-grade NAT/],
    ['::ffff:0.0.0.0', /unspecified/],
    ['0:0:0:0:0:ffff:a9fe:a9fe', /link-local/],
    ['::ffff:0:10.0.0.1', /private/],
    ['64:ff9b::10.0.0.1', /private/],
    ['64:ff9b::a9fe:a9fe', /link-local/],
    // Local-use NAT64 (RFC 8215) puts the IPv4 address elsewhere: read at the /96's place this one looked like 8.8.8.8.
    ['64:ff9b:1:a9fe:a9:fe00:808:808', /non-public|NAT64|rfc6052/],
    ['2002:0a00:0001::1', /private/],
    ['2002:7f00:0001::1', /loopback/],
    ['::127.0.0.1', /loopback/],
    ['::10.0.0.1', /private/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
    ['not-an-ip', /not an IP address/],
  ])('%s is refused (%s)', (address, why) => {
    expect(nonPublicReason(address)).toMatch(why);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:0808:0808::1',
  ])('%s is public', (address) => {
    expect(nonPublicReason(address)).toBeNull();
  });

  const octet = fc.integer({ min: 0, max: 255 });
  const privateV4 = fc.oneof(
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), octet, octet),
    fc.tuple(fc.integer({ min: 224, max: 255 }), octet, octet, octet),
    fc.tuple(fc.constant(0), octet, octet, octet),
  );

  test('property: every address in a refused IPv4 range is refused, plain and IPv4-mapped in both spellings', () => {
    fc.assert(
      fc.property(privateV4, (parts) => {
        const v4 = parts.join('.');
        const hex = `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
        expect(nonPublicReason(v4)).not.toBeNull();
        expect(nonPublicReason(`::ffff:${v4}`)).not.toBeNull();
        expect(nonPublicReason(`::ffff:${hex}`)).not.toBeNull();
        expect(nonPublicReason(`64:ff9b::${v4}`)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  test('property: an IPv4-mapped address is judged exactly like its IPv4 address', () => {
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), (parts) => {
        const v4 = parts.join('.');
        expect(nonPublicReason(`::ffff:${v4}`) === null).toBe(nonPublicReason(v4) === null);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('checkUrlShape', () => {
  test.each([
    ['http://hooks.example.com/x', /must use https \(not http; .*MQ_WEBHOOK_ALLOW_PRIVATE/],
    ['ftp://hooks.example.com/x', /must use https/],
    ['hooks.example.com/x', /not a valid absolute URL/],
    ['https://user:pass@hooks.example.com/x', /user name or password/],
    ['https://127.0.0.1/x', /127\.0\.0\.1 is a loopback address/],
    ['https://2130706433/x', /127\.0\.0\.1 is a loopback address/],
    ['https://0x7f.1/x', /loopback/],
    ['https://[::1]/x', /loopback/],
    ['https://[::ffff:169.254.169.254]/latest/meta-data', /link-local/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
    ['https://10.0.0.1:8443/x', /private/],
  ])('%s is refused', (url, why) => {
    const checked = checkUrlShape(url, false);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(why);
  });

  test('a URL longer than 2048 characters is refused', () => {
    expect(checkUrlShape(`https://hooks.example.com/${'a'.repeat(2100)}`, false)).toEqual({ ok: false, reason: expect.stringMatching(/longer than 2048/) });
  });

  test('allowed by the operator: http and literal private addresses pass; other schemes still do not', () => {
    expect(checkUrlShape('http://127.0.0.1:8080/x', true).ok).toBe(true);
    expect(checkUrlShape('https://10.0.0.1/x', true).ok).toBe(true);
    expect(checkUrlShape('ftp://10.0.0.1/x', true).ok).toBe(false);
    expect(checkUrlShape('http://u:p@127.0.0.1/x', true).ok).toBe(false);
  });
});

describe('checkWebhookUrl (with DNS)', () => {
  const dns: Record<string, string[]> = {
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'localhost.example.com': ['127.0.0.1'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
    'metadata.example.com': ['169.254.169.254'],
    'mapped.example.com': ['::ffff:192.168.1.1'],
    'v6private.example.com': ['fd00::1'],
  };
  const lookup = async (host: string) => {
    const found = dns[host];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found;
  };

  test('a host resolving to public addresses only is accepted, with those addresses (a delivery connects to them)', async () => {
    await expect(checkWebhookUrl('https://hooks.example.com/in', { allowPrivate: false, lookup })).resolves.toMatchObject({ ok: true, addresses: dns['hooks.example.com'] });
  });

  test.each([
    ['https://localhost.example.com/x', /resolves to a loopback address/],
    ['https://mixed.example.com/x', /resolves to a private address/],
    ['https://metadata.example.com/x', /resolves to a link-local address/],
    ['https://mapped.example.com/x', /resolves to a private address \(as IPv4-mapped IPv6\)/],
    ['https://v6private.example.com/x', /unique local/],
    ['https://nowhere.example.com/x', /does not resolve \(ENOTFOUND\)/],
  ])('%s is refused: every resolved address counts', async (url, why) => {
    const checked = await checkWebhookUrl(url, { allowPrivate: false, lookup });
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(why);
  });

  test('a resolver that never answers is a refusal for now (transient) after the lookup timeout, not a name that does not resolve', async () => {
    const checked = await checkWebhookUrl('https://slow.example.com/x', { allowPrivate: false, lookup: () => new Promise(() => {}), lookupTimeoutMs: 50 });
    expect(checked).toEqual({ ok: false, transient: true, reason: expect.stringMatching(/could not be looked up just now \(ETIMEOUT\)/) });
  });

  test('the real resolver: localhost is loopback', async () => {
    const checked = await checkWebhookUrl('https://localhost/x', { allowPrivate: false });
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(/loopback/);
  });

  test('allowed by the operator: no address check at all', async () => {
    await expect(checkWebhookUrl('http://localhost.example.com/x', { allowPrivate: true, lookup })).resolves.toMatchObject({ ok: true });
  });
});

describe('postDelivery', () => {
  test('connects to the address the URL check approved, not to what the name resolves to when connecting (DNS rebinding)', async () => {
    const seen: Array<{ host?: string; body: string }> = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ ...(request.headers.host ? { host: request.headers.host } : {}), body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // A name no resolver knows (.invalid is reserved): the connection can only go where the check said.
      const url = new URL(`http://hooks.rebinding.invalid:${port}/in`);
      const attempt = (addresses?: string[]) =>
        postDelivery({ url, headers: {} as SignedHeaders, body: '{"n":1}', userAgent: 'test', timeoutMs: 2_000, abort: new AbortController().signal, ...(addresses ? { addresses } : {}) });
      await expect(attempt(['127.0.0.1'])).resolves.toEqual({ kind: 'delivered', status: 204 });
      expect(seen).toEqual([{ host: `hooks.rebinding.invalid:${port}`, body: '{"n":1}' }]);
      // Every approved address is tried, as DNS's answer would be: the first one refusing does not fail the delivery.
      await expect(attempt(['127.0.0.2', '127.0.0.1'])).resolves.toEqual({ kind: 'delivered', status: 204 });
      expect(seen).toHaveLength(2);
      // Without approved addresses the name is resolved when connecting, and this one resolves nowhere.
      await expect(attempt()).resolves.toMatchObject({ kind: 'failed', status: null, error: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/) });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
