import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { failFastResolver } from './dns-failures.js';
import type { Resolver } from './ssrf.js';

const lookup = (resolve: Resolver, host: string) =>
  new Promise<{ error: NodeJS.ErrnoException | null; addresses: LookupAddress[]; ms: number }>((done) => {
    const started = performance.now();
    resolve(host, { all: true }, (error, addresses) => done({ error, addresses, ms: performance.now() - started }));
  });

describe('failFastResolver', () => {
  it('asks DNS once for concurrent lookups of a failing name, and fails at once until the TTL passes', async () => {
    let calls = 0;
    let clock = 0;
    const slowFailure: Resolver = (_host, _options, callback) => {
      calls++;
      setTimeout(() => callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []), 200);
    };
    const resolve = failFastResolver(slowFailure, { ttlMs: 1000, now: () => clock });
    const first = await Promise.all(Array.from({ length: 10 }, () => lookup(resolve, 'dead.example')));
    expect(calls).toBe(1);
    expect(first.every((r) => r.error?.code === 'ENOTFOUND')).toBe(true);
    const again = await lookup(resolve, 'DEAD.example');
    expect(again.error?.code).toBe('ENOTFOUND');
    expect(again.ms).toBeLessThan(50);
    expect(calls).toBe(1);
    clock = 1001;
    await lookup(resolve, 'dead.example');
    expect(calls).toBe(2);
  });

  it('does not remember names that resolve', async () => {
    let calls = 0;
    const ok: Resolver = (_host, _options, callback) => {
      calls++;
      callback(null, [{ address: '93.184.216.34', family: 4 }]);
    };
    const resolve = failFastResolver(ok);
    expect((await lookup(resolve, 'live.example')).addresses).toEqual([{ address: '93.184.216.34', family: 4 }]);
    await lookup(resolve, 'live.example');
    expect(calls).toBe(2);
  });
});
