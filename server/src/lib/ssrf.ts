import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { defined } from './defined.js';
import { isAllowedWebhookPort, portOf } from './webhook-ports.js';

/**
 * Server-side request forgery guards for webhook URLs: which URLs may be subscribed, which
 * addresses may be connected to, and a `lookup` for sockets that refuses the others. The
 * socket connects to exactly the address the lookup checked, so a DNS answer cannot change
 * between the check and the connection (DNS rebinding).
 */

/** A name resolver with the shape of `dns.lookup(hostname, { all: true }, cb)`. */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
  readonly host: string;
  readonly address: string;
  constructor(host: string, address: string, policy: AddressPolicy = 'public') {
    super(
      `${host} resolves to ${address}, which is not a ${policy === 'local' ? 'loopback or private' : 'public'} address.`,
    );
    this.host = host;
    this.address = address;
  }
}

/**
 * True for a public unicast address. Refused: loopback, private (RFC 1918, IPv6 unique local),
 * link-local, CGNAT, multicast, broadcast, unspecified, reserved/documentation/benchmarking
 * ranges, and the IPv6 forms that carry such an IPv4 address (IPv4-mapped, IPv4-compatible,
 * NAT64 64:ff9b::/96, 6to4) or hide it (Teredo, local-use NAT64).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (parsed.kind() === 'ipv4') return (parsed as ipaddr.IPv4).range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped') return isPublicAddress(v6.toIPv4Address().toString());
  // An IPv6 address is always eight 16-bit words.
  const word = (i: number) => defined(v6.parts[i], `word ${i} of an IPv6 address`);
  if (range === 'rfc6052') {
    // 64:ff9b::/96 embeds an IPv4 address in the last 32 bits; 64:ff9b:1::/48 is local-use.
    if (v6.parts[2] !== 0) return false;
    return isPublicAddress(embeddedIPv4(word(6), word(7)));
  }
  if (range === '6to4') return isPublicAddress(embeddedIPv4(word(1), word(2)));
  if (range !== 'unicast') return false;
  // ::/96 (IPv4-compatible, deprecated) and anything outside global unicast 2000::/3.
  if ((word(0) & 0xe000) !== 0x2000) return false;
  return true;
}

const embeddedIPv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * True for a loopback or private address (127/8, RFC 1918, ::1, fc00::/7, and IPv4-mapped forms
 * of these): where a developer's own receiver listens. Link-local (cloud metadata at
 * 169.254.169.254) and the other special ranges are not local in this sense.
 */
export function isLocalAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return isLocalAddress((parsed as ipaddr.IPv6).toIPv4Address().toString());
  return ['loopback', 'private', 'uniqueLocal'].includes(parsed.range());
}

/**
 * Which addresses a delivery may connect to: `public` ones (the rule), `any` (development mode),
 * or only `local` ones (development mode on a port that public hosts may not be sent to).
 */
export type AddressPolicy = 'public' | 'local' | 'any';

export const addressAllowed = (policy: AddressPolicy, address: string): boolean =>
  policy === 'any' || (policy === 'public' ? isPublicAddress(address) : isLocalAddress(address));

/**
 * The addresses a delivery to this URL may connect to, or null when it may not be sent at all:
 * a scheme other than https (http too in development mode), or a port that webhook-ports.ts
 * does not allow (in development mode such a port is still fine on a loopback or private
 * address). Checked at send time too, so a stored URL that breaks the rule is never sent to.
 */
export function addressPolicyOf(url: URL, { allowInsecure }: { allowInsecure: boolean }): AddressPolicy | null {
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return null;
  const port = portOf(url);
  if (isAllowedWebhookPort(port, { allowInsecure })) return allowInsecure ? 'any' : 'public';
  return allowInsecure && port !== 0 ? 'local' : null;
}

/** Host names that never name a public host. */
const LOCAL_NAME = /(^|\.)(localhost|local|localdomain|internal|intranet|lan|home\.arpa|corp)$/i;

export class WebhookUrlError extends Error {}

const PORT_RULE =
  'The url must use port 443, or a port from 1024 up that is not a well-known service port (see the API description).';

/**
 * The syntax rules of a subscription URL: `https://` (or `http://` in development mode), no
 * credentials, a port that webhook-ports.ts allows, and unless in development mode a host that
 * is not an IP address outside the public ranges, not a local name (`localhost`, `*.local`,
 * single labels, …). In development mode another port is fine on a loopback or private address
 * (a name's addresses are checked by checkWebhookUrl).
 */
export function checkWebhookUrlSyntax(raw: string, { allowInsecure }: { allowInsecure: boolean }): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('The url must be a valid absolute URL.');
  }
  if (url.username || url.password) throw new WebhookUrlError('The url must not contain credentials.');
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new WebhookUrlError('The url must use https on a public host.');
  const host = hostOf(url);
  const policy = addressPolicyOf(url, { allowInsecure });
  if (!policy || (policy === 'local' && isIP(host) && !isLocalAddress(host))) throw new WebhookUrlError(PORT_RULE);
  if (allowInsecure) return url;
  if (isIP(host)) {
    if (!isPublicAddress(host)) throw new WebhookUrlError('The url must use https on a public host.');
  } else if (LOCAL_NAME.test(host.replace(/\.$/, '')) || !host.replace(/\.$/, '').includes('.')) {
    throw new WebhookUrlError('The url must use https on a public host.');
  }
  return url;
}

/**
 * The syntax rules, then the host's DNS answers where they decide: a name that resolves to a
 * non-public address is refused. A name that does not resolve (yet) is accepted: the address is
 * checked again at every delivery, which is the check that counts. In development mode, a name
 * on a port that public hosts may not be sent to must resolve, to loopback or private addresses
 * only.
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowInsecure: boolean; resolve?: Resolver; timeoutMs?: number },
): Promise<URL> {
  const url = checkWebhookUrlSyntax(raw, options);
  const host = hostOf(url);
  if (isIP(host)) return url;
  const policy = addressPolicyOf(url, options);
  if (policy === 'any') return url;
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), options.timeoutMs ?? 2000);
    (options.resolve ?? systemResolver)(host, { all: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? [] : found);
    });
  });
  if (policy === 'local') {
    if (!addresses.length || addresses.some((a) => !isLocalAddress(a.address))) throw new WebhookUrlError(PORT_RULE);
    return url;
  }
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new WebhookUrlError('The url must use https on a public host.');
  return url;
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` (undici's `connect` options): resolves once, refuses
 * the connection when any answer is outside the policy (`public` addresses, only `local` ones, or
 * `any`), and hands the checked addresses to the socket, which connects to them without
 * resolving again.
 */
export function createCheckedLookup({
  policy,
  resolve = systemResolver,
}: {
  policy: AddressPolicy;
  resolve?: Resolver;
}) {
  return (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    resolve(hostname, { all: true, family }, (error, addresses) => {
      if (error) return callback(error, []);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), []);
      const refused = addresses.find((a) => !addressAllowed(policy, a.address));
      if (refused)
        return callback(new AddressNotAllowedError(hostname, refused.address, policy) as NodeJS.ErrnoException, []);
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
