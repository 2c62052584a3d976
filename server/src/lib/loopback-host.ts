import { BlockList, isIP } from 'node:net';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * Whether the server's HOST binds to loopback only: 127.0.0.0/8, ::1 (in any spelling, bracketed
 * or IPv4-mapped) or `localhost`. Anything else, a wildcard (0.0.0.0, ::), a private address or
 * any other host name (which may resolve anywhere), counts as reachable from other machines.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase();
  if (name === 'localhost' || name === 'localhost.') return true;
  const address = /^\[(.*)\]$/.exec(name)?.[1] ?? name;
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
