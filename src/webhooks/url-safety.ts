import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may send webhooks. An endpoint URL is a request the
 * service makes on a client's behalf, so it must not reach the service's own
 * network (SSRF): https only, and every address the host resolves to public.
 * Checked when a URL is registered and again before every delivery, because
 * DNS can change in between (rebinding).
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Resolves a host name to every address it has (dns.lookup with all: true). */
export type AddressLookup = (hostname: string) => Promise<string[]>;

export const systemLookup: AddressLookup = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface UrlPolicy {
  /** The operator's MQ_WEBHOOK_ALLOW_PRIVATE: http and non-public addresses allowed. */
  allowPrivate: boolean;
  lookup?: AddressLookup;
  /** A resolver that never answers must not hold a request or a worker. */
  lookupTimeoutMs?: number;
}

/** `addresses`: what the host resolved to, every one public (absent when not resolved: an operator allows private URLs). */
/** `transient`: the name could not be looked up just now (a time-out, a failing resolver): not the URL's fault. */
export type UrlCheck = { ok: true; url: URL; addresses?: string[] } | { ok: false; reason: string; transient?: true };

/** Resolver answers that say the name does not exist; any other failure is the resolver's, for now. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN']);

const ALLOW_HINT = 'an operator can allow such URLs with MQ_WEBHOOK_ALLOW_PRIVATE=true';

/** What a non-public range is called in a refusal. */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (this includes cloud metadata at 169.254.169.254)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address',
  reserved: 'a reserved address',
  as112: 'a reserved (AS112) address',
  amt: 'a reserved (AMT) address',
  uniqueLocal: 'a private (unique local, fc00::/7) address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  teredo: 'a Teredo tunnel address',
  benchmarking: 'a benchmarking address',
  as112v6: 'a reserved (AS112) address',
  deprecatedOrchid: 'a reserved (ORCHID) address',
  orchid2: 'a reserved (ORCHID) address',
  droneRemoteIdProtocolEntityTags: 'a reserved (DRIP) address',
  segmentRouting: 'a segment-routing address',
};

/** A public address is null; otherwise the sentence part that says what it is. */
export function nonPublicReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? null : (RANGE_NAMES[range] ?? `a non-public address (${range})`);
  }
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  // Forms that carry an IPv4 address are judged by that address.
  const embedded = embeddedIPv4(v6, range);
  if (embedded) {
    const inner = nonPublicReason(embedded.toString());
    return inner ? `${inner} (as ${range === 'ipv4Mapped' ? 'IPv4-mapped' : range} IPv6)` : null;
  }
  return range === 'unicast' ? null : (RANGE_NAMES[range] ?? `a non-public address (${range})`);
}

function embeddedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return new ipaddr.IPv4(bytes.slice(12, 16));
    case 'rfc6052':
      // 64:ff9b::a.b.c.d (NAT64's well-known /96). The local-use 64:ff9b:1::/48 (RFC 8215) places the IPv4 address
      // elsewhere by its operator's prefix length: read at the /96's place it judged a metadata address public (found by
      // review). Null: it is refused as a non-public range.
      return bytes.slice(4, 12).every((b) => b === 0) ? new ipaddr.IPv4(bytes.slice(12, 16)) : null;
    case '6to4': // 2002:aabb:ccdd::
      return new ipaddr.IPv4(bytes.slice(2, 6));
    default:
      break;
  }
  // ::a.b.c.d (IPv4-compatible, deprecated) is what some stacks still route to IPv4.
  if (bytes.slice(0, 12).every((b) => b === 0) && !bytes.slice(12, 16).every((b) => b === 0) && range !== 'loopback') {
    return new ipaddr.IPv4(bytes.slice(12, 16));
  }
  return null;
}

/** Checks that need no network: shape, scheme, credentials, literal addresses. */
export function checkUrlShape(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return { ok: false, reason: `The webhook URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The webhook URL is not a valid absolute URL.' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: `The webhook URL must use https (not ${url.protocol.replace(/:$/, '')}${url.protocol === 'http:' ? `; ${ALLOW_HINT}` : ''}).` };
  }
  if (url.username || url.password) return { ok: false, reason: 'The webhook URL must not contain a user name or password.' };
  if (!url.hostname) return { ok: false, reason: 'The webhook URL has no host.' };
  if (!allowPrivate) {
    const host = bareHost(url);
    if (ipaddr.isValid(host)) {
      const why = nonPublicReason(host);
      if (why) return { ok: false, reason: `The webhook URL's host ${host} is ${why}; only public addresses are allowed (${ALLOW_HINT}).` };
    }
  }
  return { ok: true, url };
}

/** The host without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** The full check: shape, then every resolved address public (unless the operator allows private ones). */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<UrlCheck> {
  const shape = checkUrlShape(raw, policy.allowPrivate);
  if (!shape.ok || policy.allowPrivate) return shape;
  const host = bareHost(shape.url);
  let addresses: string[];
  try {
    addresses = await withTimeout((policy.lookup ?? systemLookup)(host), policy.lookupTimeoutMs ?? 5_000);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const named = typeof code === 'string' ? ` (${code})` : '';
    if (typeof code === 'string' && NO_SUCH_NAME.has(code)) return { ok: false, reason: `The webhook URL's host ${host} does not resolve${named}.` };
    // Found by review: a resolver's time-out was answered as the caller's bad URL.
    return { ok: false, transient: true, reason: `The webhook URL's host ${host} could not be looked up just now${named}.` };
  }
  if (addresses.length === 0) return { ok: false, reason: `The webhook URL's host ${host} does not resolve.` };
  for (const address of addresses) {
    const why = nonPublicReason(address);
    // The address itself is not named: any organization may register URLs, and the answer would tell it what this
    // service's resolver says of internal names.
    if (why) return { ok: false, reason: `The webhook URL's host ${host} resolves to ${why}; only public addresses are allowed (${ALLOW_HINT}).` };
  }
  // A literal address resolves to itself; a name's addresses are what a delivery connects to (see postDelivery).
  return { ...shape, addresses };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('DNS lookup timed out'), { code: 'ETIMEOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
