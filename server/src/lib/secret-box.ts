import { createCipheriv, createDecipheriv, createHmac, randomBytes, scryptSync } from 'node:crypto';
import { ConfigError, type Config } from '../config.js';

/**
 * Webhook secrets at rest: AES-256-GCM, stored as `v1:<key id>:<base64 of iv | tag | ciphertext>`,
 * so a database dump does not hand out signing secrets. The version prefix tells sealed values
 * from the plaintext of databases made before encryption (start-up seals those); the key id tells
 * which key sealed a value, so a rotation (LOYALTY_SECRET_KEY_PREVIOUS) knows what to seal again
 * and a wrong key is named in a clear error instead of producing wrong signatures.
 */
export type SecretBox = {
  seal: (plaintext: string) => string;
  /** The plaintext of a sealed value (or of a legacy plaintext `whsec_` value). */
  open: (stored: string) => string;
  /** What values sealed with the current key start with: others need sealing again. */
  currentPrefix: () => string;
};

/** A key that cannot open a stored secret, or no key at all: a configuration problem, one line at start-up. */
export class SecretKeyError extends ConfigError {}

type DerivedKey = { id: string; key: Buffer };

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/**
 * scrypt, not HKDF: LOYALTY_SECRET_KEY may be any string, a passphrase too, and every sealed
 * secret starts with the known text `whsec_`, so a dump lets anyone test guesses offline. scrypt
 * makes each guess cost ~30 MiB and tens of milliseconds; the server pays that once per process.
 * The salt is fixed (there is nowhere to keep a per-install salt before the database is open).
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const SALT = 'loyalty webhook secrets v1';

function deriveKey(secret: string): DerivedKey {
  const key = scryptSync(secret, SALT, 32, SCRYPT);
  return { id: createHmac('sha256', key).update('key id').digest('hex').slice(0, 8), key };
}

export function createSecretBox(keys: { key: string | undefined; previous?: string | undefined }): SecretBox {
  let derived: { current: DerivedKey | undefined; previous: DerivedKey | undefined } | undefined;
  const derive = () =>
    (derived ??= {
      current: keys.key ? deriveKey(keys.key) : undefined,
      previous: keys.previous ? deriveKey(keys.previous) : undefined,
    });
  const current = (): DerivedKey => {
    const key = derive().current;
    if (!key)
      throw new SecretKeyError(
        'LOYALTY_SECRET_KEY is not set: it is the key of webhook secrets at rest (e.g. `openssl rand -base64 32`).',
      );
    return key;
  };

  return {
    seal(plaintext) {
      const { id, key } = current();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}:${id}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
    },
    open(stored) {
      if (stored.startsWith('whsec_')) return stored;
      const [version, id, data] = stored.split(':');
      if (version !== VERSION || !id || data === undefined)
        throw new SecretKeyError(`A stored webhook secret is neither sealed (${VERSION}:…) nor a whsec_ secret.`);
      const { previous } = derive();
      const { key } = [current(), previous].find((k) => k?.id === id) ?? {};
      if (!key) {
        throw new SecretKeyError(
          `A webhook secret is sealed with key ${id}, which is neither LOYALTY_SECRET_KEY (${current().id}) nor LOYALTY_SECRET_KEY_PREVIOUS ` +
            `(${previous?.id ?? 'unset'}): start with the key that sealed it (as LOYALTY_SECRET_KEY_PREVIOUS during a rotation).`,
        );
      }
      const bytes = Buffer.from(data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SecretKeyError(
          `A webhook secret sealed with key ${id} cannot be decrypted: the stored value is damaged.`,
        );
      }
    },
    currentPrefix: () => `${VERSION}:${current().id}:`,
  };
}

const boxes = new Map<string, SecretBox>();

/** The box of a configuration's keys, made once per process (scrypt runs once per key). */
export function secretBoxOf(config: Pick<Config, 'secretKey' | 'secretKeyPrevious'>): SecretBox {
  const cacheKey = JSON.stringify([config.secretKey, config.secretKeyPrevious]);
  let box = boxes.get(cacheKey);
  if (!box) {
    box = createSecretBox({ key: config.secretKey, previous: config.secretKeyPrevious });
    boxes.set(cacheKey, box);
  }
  return box;
}
