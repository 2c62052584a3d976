import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import { SANDBOX_PASS_TYPE_ID, SANDBOX_TEAM_ID } from './pass-identity.js';
import { generateSandboxCertificates, type SandboxCertificates } from './sandbox-certificates.js';

/**
 * What signs Apple Wallet passes: the operator's Pass Type ID certificate (LOYALTY_APPLE_PASS_*),
 * or the sandbox's test CA and pass certificate, generated once into `<dataDir>/wallet/`.
 * The key is held in memory as unencrypted PEM (what passkit-generator's node-forge reads):
 * never logged, never written anywhere by this module but the sandbox's 0600 file.
 */
export type AppleSigning = {
  mode: 'operator' | 'sandbox';
  passTypeId: string;
  teamId: string;
  /** The pass-signing certificate (PEM). */
  cert: string;
  /** Its private key (PEM, PKCS#1, unencrypted). */
  key: string;
  /** The intermediate that issued `cert`: Apple's WWDR, or the sandbox CA itself (PEM). */
  wwdr: string;
  /** The sandbox CA that verifies every sandbox pass (PEM); undefined with operator certificates. */
  sandboxCa: string | undefined;
  /** SHA-256 of the signing certificate (hex): part of every pass version's cache key and ETag. */
  fingerprint: string;
};

/** `<dataDir>/wallet/apple-sandbox/`: the sandbox's CA and pass certificate (the wallet folder may hold other wallets' keys). */
export const SANDBOX_SIGNING_DIR = path.join('wallet', 'apple-sandbox');
const FILES = { caCert: 'ca.pem', passCert: 'pass-certificate.pem', passKey: 'pass-key.pem' } as const;

const loaded = new Map<string, Promise<AppleSigning>>();

/** The signing material of this configuration, loaded (or generated) once per process. */
export function appleSigningOf(config: Pick<Config, 'dataDir' | 'wallet'>): Promise<AppleSigning> {
  const apple = config.wallet.apple;
  const id = apple ? `operator:${apple.cert}:${apple.passTypeId}` : `sandbox:${path.resolve(config.dataDir)}`;
  let signing = loaded.get(id);
  if (!signing) {
    signing = loadAppleSigning(config);
    loaded.set(id, signing);
    // A failure is not remembered: the next request tries again (after the operator fixed a file).
    signing.catch(() => loaded.delete(id));
  }
  return signing;
}

/** Reads (sandbox: generates when missing) the signing material; appleSigningOf remembers it. */
export async function loadAppleSigning(config: Pick<Config, 'dataDir' | 'wallet'>): Promise<AppleSigning> {
  const apple = config.wallet.apple;
  if (!apple) {
    const files = await sandboxCertificates(config.dataDir);
    return {
      mode: 'sandbox',
      passTypeId: SANDBOX_PASS_TYPE_ID,
      teamId: SANDBOX_TEAM_ID,
      cert: files.passCert,
      key: files.passKey,
      wwdr: files.caCert,
      sandboxCa: files.caCert,
      fingerprint: new X509Certificate(files.passCert).fingerprint256.replaceAll(':', '').toLowerCase(),
    };
  }
  const cert = new X509Certificate(await pemOrFile(apple.cert, 'LOYALTY_APPLE_PASS_CERT'));
  const wwdr = new X509Certificate(await pemOrFile(apple.wwdr, 'LOYALTY_APPLE_WWDR'));
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey({
      key: await pemOrFile(apple.key, 'LOYALTY_APPLE_PASS_KEY'),
      passphrase: apple.keyPassphrase,
    });
  } catch (error) {
    throw new Error(
      `LOYALTY_APPLE_PASS_KEY: cannot read the private key (${(error as Error).message.split('\n')[0]}); ` +
        'give a PEM key, and LOYALTY_APPLE_PASS_KEY_PASSPHRASE when it is encrypted',
    );
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('LOYALTY_APPLE_PASS_KEY: Apple pass certificates use RSA keys');
  if (!cert.checkPrivateKey(key))
    throw new Error('LOYALTY_APPLE_PASS_KEY is not the key of the certificate in LOYALTY_APPLE_PASS_CERT');
  const subject = subjectOf(cert);
  if (subject.UID !== undefined && subject.UID !== apple.passTypeId)
    throw new Error(
      `LOYALTY_APPLE_PASS_TYPE_ID is ${apple.passTypeId}, but the certificate is for ${subject.UID}: Wallet refuses such a pass`,
    );
  if (subject.OU !== undefined && subject.OU !== apple.teamId)
    throw new Error(
      `LOYALTY_APPLE_TEAM_ID is ${apple.teamId}, but the certificate is of team ${subject.OU}: Wallet refuses such a pass`,
    );
  if (new Date(cert.validTo).getTime() < Date.now())
    throw new Error(
      `the certificate in LOYALTY_APPLE_PASS_CERT expired on ${cert.validTo}: renew it in Apple's developer account`,
    );
  if (!cert.checkIssued(wwdr))
    throw new Error(
      'LOYALTY_APPLE_WWDR did not issue the certificate in LOYALTY_APPLE_PASS_CERT: give the matching WWDR (G4)',
    );
  return {
    mode: 'operator',
    passTypeId: apple.passTypeId,
    teamId: apple.teamId,
    cert: cert.toString(),
    key: key.export({ type: 'pkcs1', format: 'pem' }).toString(),
    wwdr: wwdr.toString(),
    sandboxCa: undefined,
    fingerprint: cert.fingerprint256.replaceAll(':', '').toLowerCase(),
  };
}

/** A credential given as its PEM text, or as the path of a file (PEM, or a DER certificate as Apple hands out). */
async function pemOrFile(value: string, variable: string): Promise<string | Buffer> {
  if (value.includes('-----BEGIN ')) return value;
  try {
    return await readFile(value);
  } catch (error) {
    throw new Error(`${variable}: neither PEM text nor a readable file (${(error as NodeJS.ErrnoException).code})`);
  }
}

function subjectOf(cert: X509Certificate): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of cert.subject.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

/**
 * The sandbox's certificates from `<dataDir>/wallet/apple-sandbox/`, generated when missing.
 * Several processes may start at once (API processes and a worker): each generates into a
 * directory of its own and renames it into place; a process that loses the race reads the
 * winner's. Directories 0700, files 0600 (set back if someone loosened them).
 */
export async function sandboxCertificates(dataDir: string): Promise<SandboxCertificates> {
  const dir = path.join(path.resolve(dataDir), SANDBOX_SIGNING_DIR);
  const existing = await readSandboxCertificates(dir);
  if (existing) return existing;
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const pending = await mkdtemp(path.join(parent, '.apple-sandbox-'));
  try {
    const made = await generateSandboxCertificates();
    for (const [name, file] of Object.entries(FILES))
      await writeFile(path.join(pending, file), made[name as keyof typeof FILES], { mode: 0o600, flag: 'wx' });
    await chmod(pending, 0o700);
    try {
      await rename(pending, dir);
      return made;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    }
  } finally {
    await rm(pending, { recursive: true, force: true });
  }
  const winner = await readSandboxCertificates(dir);
  if (!winner) throw new Error(`${dir} exists but holds no sandbox certificates: remove it to have them made anew`);
  return winner;
}

async function readSandboxCertificates(dir: string): Promise<SandboxCertificates | undefined> {
  const read = async (file: string) => {
    const full = path.join(dir, file);
    const text = await readFile(full, 'utf8');
    await chmod(full, 0o600);
    return text;
  };
  // Twice at most: another process's directory may be renamed into place between a read that
  // found nothing and the check that follows it; the second read then finds it whole.
  for (let round = 0; ; round++) {
    try {
      const [caCert, passCert, passKey] = await Promise.all([
        read(FILES.caCert),
        read(FILES.passCert),
        read(FILES.passKey),
      ]);
      await chmod(dir, 0o700);
      return { caCert, passCert, passKey };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      try {
        await readFile(path.join(dir, FILES.caCert));
      } catch (inner) {
        if ((inner as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      }
      if (round > 0)
        throw new Error(`${dir} lacks ${Object.values(FILES).join(', ')}: remove the directory to have them made anew`);
    }
  }
}
