/**
 * `node:crypto` without a static import: `process.getBuiltinModule` (Node >= 22.3, Deno >= 2.1,
 * Bun, workerd with nodejs_compat) returns it synchronously. A static `import 'node:crypto'`
 * would stop `@loyalty/sdk/webhooks` from loading at all in a browser or a worker, where its Web
 * Crypto functions work; only the synchronous signing and verification call this.
 */
type NodeCrypto = typeof import('node:crypto');

let loaded: NodeCrypto | undefined;

export function nodeCrypto(caller: string): NodeCrypto {
  loaded ??= (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
    'node:crypto',
  ) as NodeCrypto | undefined;
  if (!loaded)
    throw new Error(
      `${caller} is synchronous and needs node:crypto, which this runtime does not have (a browser or a worker?). ` +
        'Use verifyAsync or constructEventAsync from @loyalty/sdk/webhooks: they verify with Web Crypto.',
    );
  return loaded;
}
