import { describe, expect, it } from 'vitest';
import {
  addressPolicyOf,
  checkWebhookUrl,
  checkWebhookUrlSyntax,
  createCheckedLookup,
  isLocalAddress,
  isPublicAddress,
  type Resolver,
} from './ssrf.js';
import { resolverTo } from '#test-helpers/resolver.js';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '192.0.0.8',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '::7f00:1',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::808:808',
    '2002:7f00:1::1',
    '2002:a00:1::',
    '2001::1',
    'not-an-address',
    '',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('checkWebhookUrlSyntax', () => {
  const strict = { allowInsecure: false };
  it.each([
    ['http://hooks.example.com/x', 'https'],
    ['https://user:pass@hooks.example.com/x', 'credentials'],
    ['https://user@hooks.example.com/x', 'credentials'],
    ['https://localhost/x', 'public host'],
    ['https://api.localhost/x', 'public host'],
    ['https://printer.local/x', 'public host'],
    ['https://intranet/x', 'public host'],
    ['https://127.0.0.1/x', 'public host'],
    ['https://2130706433/x', 'public host'],
    ['https://0x7f.1/x', 'public host'],
    ['https://10.0.0.5:8443/x', 'public host'],
    ['https://[::1]/x', 'public host'],
    ['https://[::ffff:127.0.0.1]/x', 'public host'],
    ['https://[fd00::1]/x', 'public host'],
    ['https://169.254.169.254/latest/meta-data', 'public host'],
    ['ftp://hooks.example.com/x', 'https'],
    ['not a url', 'valid absolute URL'],
  ])('refuses %s', (url, reason) => {
    expect(() => checkWebhookUrlSyntax(url, strict)).toThrow(reason);
  });

  it('accepts https on a public name or address', () => {
    expect(checkWebhookUrlSyntax('https://hooks.example.com:8443/loyalty?x=1', strict).host).toBe(
      'hooks.example.com:8443',
    );
    expect(checkWebhookUrlSyntax('https://8.8.8.8/x', strict).hostname).toBe('8.8.8.8');
  });

  it('accepts http and local hosts in development mode, but never credentials', () => {
    expect(checkWebhookUrlSyntax('http://127.0.0.1:4000/hook', { allowInsecure: true }).port).toBe('4000');
    expect(checkWebhookUrlSyntax('http://localhost/hook', { allowInsecure: true }).hostname).toBe('localhost');
    expect(() => checkWebhookUrlSyntax('http://a:b@127.0.0.1/hook', { allowInsecure: true })).toThrow('credentials');
  });
});

describe('isLocalAddress', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '::1', 'fd12:3456::1', '::ffff:192.168.0.7'])(
    'counts %s as local',
    (address) => {
      expect(isLocalAddress(address)).toBe(true);
    },
  );
  it.each([
    '8.8.8.8',
    '169.254.169.254',
    'fe80::1',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '2606:4700:4700::1111',
    'nope',
  ])('does not count %s', (address) => {
    expect(isLocalAddress(address)).toBe(false);
  });
});

describe('the port rule', () => {
  const strict = { allowInsecure: false };
  const dev = { allowInsecure: true };
  const port = 'port 443, or a port from 1024 up';

  it.each([
    'https://hooks.example.com:0/x',
    'https://hooks.example.com:22/x',
    'https://hooks.example.com:80/x',
    'https://hooks.example.com:1023/x',
    'https://hooks.example.com:6379/x',
    'https://hooks.example.com:5432/x',
    'https://hooks.example.com:11211/x',
    'https://hooks.example.com:2375/x',
    'https://8.8.8.8:9200/x',
    'https://[2606:4700:4700::1111]:27017/x',
  ])('refuses %s', (url) => {
    expect(() => checkWebhookUrlSyntax(url, strict)).toThrow(port);
  });

  it.each([
    'https://hooks.example.com/x',
    'https://hooks.example.com:443/x',
    'https://hooks.example.com:1024/x',
    'https://hooks.example.com:8443/x',
    'https://hooks.example.com:8080/x',
    'https://hooks.example.com:65535/x',
  ])('accepts %s', (url) => {
    expect(checkWebhookUrlSyntax(url, strict)).toBeInstanceOf(URL);
  });

  it('keeps 80 in development mode, and any port but 0 on a loopback or private address', () => {
    expect(checkWebhookUrlSyntax('http://hooks.example.com/x', dev)).toBeInstanceOf(URL);
    expect(checkWebhookUrlSyntax('http://hooks.example.com:80/x', dev)).toBeInstanceOf(URL);
    for (const url of [
      'http://127.0.0.1:6379/x',
      'http://10.0.0.5:22/x',
      'http://[::1]:5432/x',
      'http://192.168.1.20:9/x',
    ]) {
      expect(checkWebhookUrlSyntax(url, dev), url).toBeInstanceOf(URL);
    }
    for (const url of [
      'http://8.8.8.8:6379/x',
      'https://8.8.8.8:22/x',
      'http://169.254.169.254:9200/x',
      'http://127.0.0.1:0/x',
    ]) {
      expect(() => checkWebhookUrlSyntax(url, dev), url).toThrow(port);
    }
  });

  it('in development mode, a name on such a port must resolve to loopback or private addresses only', async () => {
    await expect(
      checkWebhookUrl('http://receiver:6379/x', { ...dev, resolve: resolverTo('127.0.0.1', '::1') }),
    ).resolves.toBeInstanceOf(URL);
    await expect(
      checkWebhookUrl('http://receiver:6379/x', { ...dev, resolve: resolverTo('172.18.0.4') }),
    ).resolves.toBeInstanceOf(URL);
    await expect(
      checkWebhookUrl('http://hooks.example.com:6379/x', { ...dev, resolve: resolverTo('93.184.216.34') }),
    ).rejects.toThrow(port);
    await expect(
      checkWebhookUrl('http://hooks.example.com:6379/x', { ...dev, resolve: resolverTo('127.0.0.1', '93.184.216.34') }),
    ).rejects.toThrow(port);
    const failing: Resolver = (_h, _o, cb) => cb(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }), []);
    await expect(checkWebhookUrl('http://nx.example.com:6379/x', { ...dev, resolve: failing })).rejects.toThrow(port);
    // An allowed port asks no resolver in development mode.
    const resolve = resolverTo('93.184.216.34');
    await expect(checkWebhookUrl('http://hooks.example.com:8080/x', { ...dev, resolve })).resolves.toBeInstanceOf(URL);
    expect(resolve.calls).toEqual([]);
  });

  it('gives the send-time policy of a stored URL', () => {
    const policy = (url: string, options: { allowInsecure: boolean }) => addressPolicyOf(new URL(url), options);
    expect(policy('https://hooks.example.com/x', strict)).toBe('public');
    expect(policy('https://hooks.example.com:8443/x', strict)).toBe('public');
    expect(policy('https://hooks.example.com:6379/x', strict)).toBeNull();
    expect(policy('http://hooks.example.com/x', strict)).toBeNull();
    expect(policy('http://hooks.example.com/x', dev)).toBe('any');
    expect(policy('http://hooks.example.com:3000/x', dev)).toBe('any');
    expect(policy('http://hooks.example.com:6379/x', dev)).toBe('local');
    expect(policy('http://hooks.example.com:0/x', dev)).toBeNull();
    expect(policy('ftp://hooks.example.com/x', dev)).toBeNull();
  });
});

describe('checkWebhookUrl (create time)', () => {
  it('refuses a name whose DNS answers include a non-public address', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', { allowInsecure: false, resolve: resolverTo('127.0.0.1') }),
    ).rejects.toThrow('public host');
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', {
        allowInsecure: false,
        resolve: resolverTo('8.8.8.8', '10.0.0.1'),
      }),
    ).rejects.toThrow();
  });

  it('accepts a name with public answers, and one that does not resolve (checked again at send time)', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', { allowInsecure: false, resolve: resolverTo('93.184.216.34') }),
    ).resolves.toBeInstanceOf(URL);
    const failing: Resolver = (_h, _o, cb) => cb(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }), []);
    await expect(
      checkWebhookUrl('https://nx.example.com/x', { allowInsecure: false, resolve: failing }),
    ).resolves.toBeInstanceOf(URL);
  });
});

describe('createCheckedLookup (send time)', () => {
  const lookupOnce = (lookup: ReturnType<typeof createCheckedLookup>, all: boolean) =>
    new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
      lookup('hooks.example.com', { all }, (error, address, family) => resolve({ error, address, family })),
    );

  it('refuses when any answer is not public (a rebinding name), resolving once', async () => {
    const resolve = resolverTo('8.8.8.8', '127.0.0.1');
    const { error } = await lookupOnce(createCheckedLookup({ policy: 'public', resolve }), true);
    expect(error?.message).toMatch(/not a public address/);
    expect(resolve.calls).toEqual(['hooks.example.com']);
  });

  it('hands the checked addresses to the socket in both callback forms', async () => {
    const lookup = createCheckedLookup({ policy: 'public', resolve: resolverTo('93.184.216.34') });
    expect(await lookupOnce(lookup, true)).toEqual({
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }],
      family: undefined,
    });
    expect(await lookupOnce(lookup, false)).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  it('with the local policy (development mode, a port public hosts may not get) refuses a public answer', async () => {
    const local = createCheckedLookup({ policy: 'local', resolve: resolverTo('127.0.0.1', '93.184.216.34') });
    expect((await lookupOnce(local, true)).error?.message).toMatch(/not a loopback or private address/);
    const ok = createCheckedLookup({ policy: 'local', resolve: resolverTo('127.0.0.1') });
    expect(await lookupOnce(ok, false)).toEqual({ error: null, address: '127.0.0.1', family: 4 });
  });
});
