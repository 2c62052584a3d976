import type { Resolver } from '../../server/src/lib/ssrf.js';

/** A DNS lookup of a test, with the host names it was asked for. */
export type FakeResolver = Resolver & { calls: string[] };

const recording = (answer: (hostname: string, callback: Parameters<Resolver>[2]) => void): FakeResolver => {
  const calls: string[] = [];
  const fn: Resolver = (hostname, _options, callback) => {
    calls.push(hostname);
    answer(hostname, callback);
  };
  return Object.assign(fn, { calls });
};

/** A resolver that answers every name with these addresses. */
export const resolverTo = (...addresses: string[]): FakeResolver =>
  recording((_hostname, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    ),
  );

/** A resolver that knows no name (ENOTFOUND). */
export const unresolvable = (): FakeResolver =>
  recording((hostname, callback) =>
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []),
  );
