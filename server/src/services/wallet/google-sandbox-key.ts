import { createPrivateKey, createPublicKey, generateKeyPair, type KeyObject, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import type { WalletApp } from './wallet-app.js';

/** The sandbox's Google Wallet signing key in the data directory (PKCS#8 PEM, mode 0600). */
export const SANDBOX_KEY_FILE = path.join('wallet', 'google-wallet-sandbox-key.pem');

export type SandboxGoogleKey = {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The public half as a JWK with `kid` (its RFC 7638 thumbprint), `alg` RS256 and `use` sig. */
  publicJwk: JWK;
  kid: string;
};

const keys = new WeakMap<WalletApp, Promise<SandboxGoogleKey>>();

/** The sandbox key of this server's data directory, read (or made) once per server; a failure is not kept. */
export function sandboxGoogleKeyOf(app: WalletApp): Promise<SandboxGoogleKey> {
  let key = keys.get(app);
  if (!key) {
    key = sandboxGoogleKey(app.config.dataDir);
    key.catch(() => keys.delete(app));
    keys.set(app, key);
  }
  return key;
}

/**
 * The sandbox's RSA key for Google Wallet save links: read from `<dataDir>/wallet/`, or made
 * there once. Several processes (the cluster's API processes, a second `npm start`) may start
 * together: each writes its candidate to a temporary file of its own and hard-links it to the
 * final name, which fails when another process won; the loser then reads the winner's key. A
 * reader never sees a half-written file, and the key never changes once written.
 */
export async function sandboxGoogleKey(dataDir: string): Promise<SandboxGoogleKey> {
  const file = path.join(path.resolve(dataDir), SANDBOX_KEY_FILE);
  const pem = (await readKeyFile(file)) ?? (await createKeyFile(file));
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { privateKey, publicKey, publicJwk: { ...jwk, kid, alg: 'RS256', use: 'sig' }, kid };
}

async function readKeyFile(file: string): Promise<string | undefined> {
  try {
    const pem = await readFile(file, 'utf8');
    // Someone loosened it: the key is a secret, set it back.
    await chmod(file, 0o600);
    return pem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function createKeyFile(file: string): Promise<string> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, pem, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, file);
    return pem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process made the key first: use its key, so every process signs with the same one.
    const winner = await readKeyFile(file);
    if (!winner) throw error;
    return winner;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}
