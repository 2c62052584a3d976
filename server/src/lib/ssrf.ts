import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guards for webhook URLs: which URLs may be subscribed, which
 * addresses may be connected to, and a `lookup` for sockets that refuses the others. The
 * socket connects to exactly the address the lookup checked, so a DNS answer cannot change
 * between the check and the connection (DNS rebinding).
 */

/** A name resolver with the shape of `dns.lookup(hostname, { all: true }, cb)`. */
export type Resolver = (hostname: string, options: { all: true; family?: number }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export const systemResolver: Resolver = (hostname, options, callback) => dnsLookup(hostname, options, callback);

export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_ADDRESS_NOT_ALLOWED';
  readonly host: string;
  readonly address: string;
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address.`);
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
  const words = v6.parts;
  if (range === 'rfc6052') {
    // 64:ff9b::/96 embeds an IPv4 address in the last 32 bits; 64:ff9b:1::/48 is local-use.
    if (words[2] !== 0) return false;
    return isPublicAddress(embeddedIPv4(words[6]!, words[7]!));
  }
  if (range === '6to4') return isPublicAddress(embeddedIPv4(words[1]!, words[2]!));
  if (range !== 'unicast') return false;
  // ::/96 (IPv4-compatible, deprecated) and anything outside global unicast 2000::/3.
  if ((words[0]! & 0xe000) !== 0x2000) return false;
  return true;
}

const embeddedIPv4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/** Host names that never name a public host. */
const LOCAL_NAME = /(^|\.)(localhost|local|localdomain|internal|intranet|lan|home\.arpa|corp)$/i;

export class WebhookUrlError extends Error {}

/**
 * The syntax rules of a subscription URL: `https://` (or `http://` in development mode), no
 * credentials, and unless in development mode a host that is not an IP address outside the public
 * ranges, not a local name (`localhost`, `*.local`, single labels, …).
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
  if (allowInsecure) return url;
  const host = hostOf(url);
  if (isIP(host)) {
    if (!isPublicAddress(host)) throw new WebhookUrlError('The url must use https on a public host.');
  } else if (LOCAL_NAME.test(host.replace(/\.$/, '')) || !host.replace(/\.$/, '').includes('.')) {
    throw new WebhookUrlError('The url must use https on a public host.');
  }
  return url;
}

/**
 * The syntax rules, then (unless in development mode) the host's DNS answers: a name that
 * resolves to a non-public address is refused. A name that does not resolve (yet) is accepted:
 * the address is checked again at every delivery, which is the check that counts.
 */
export async function checkWebhookUrl(raw: string, options: { allowInsecure: boolean; resolve?: Resolver; timeoutMs?: number }): Promise<URL> {
  const url = checkWebhookUrlSyntax(raw, options);
  const host = hostOf(url);
  if (options.allowInsecure || isIP(host)) return url;
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), options.timeoutMs ?? 2000);
    (options.resolve ?? systemResolver)(host, { all: true }, (error, found) => {
      clearTimeout(timer);
      resolve(error ? [] : found);
    });
  });
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new WebhookUrlError('The url must use https on a public host.');
  return url;
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` (undici's `connect` options): resolves once, refuses
 * the connection when any answer is not public (unless `allowInsecure`), and hands the checked
 * addresses to the socket, which connects to them without resolving again.
 */
export function createCheckedLookup({ allowInsecure, resolve = systemResolver }: { allowInsecure: boolean; resolve?: Resolver }) {
  return (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback): void => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    resolve(hostname, { all: true, family }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), []);
      if (!allowInsecure) {
        const refused = addresses.find((a) => !isPublicAddress(a.address));
        if (refused) return callback(new AddressNotAllowedError(hostname, refused.address) as NodeJS.ErrnoException, []);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}
