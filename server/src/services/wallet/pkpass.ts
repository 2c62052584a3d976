import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { PKPass } from 'passkit-generator';
import type { Config } from '../../config.js';
import { type AppleSigning, appleSigningOf } from './apple-signing.js';
import { expiryInstantOf, type PassContent, passContentOf } from './pass-content.js';
import { type PassImages, passImagesOf } from './pass-images.js';
import type { WalletPass } from './wallet-pass.js';

/** A signed Apple Wallet pass of one version of a pass: the `.pkpass` archive and its validators. */
export type Pkpass = {
  body: Buffer;
  /** Strong ETag of this version (quoted). */
  etag: string;
  /** The pass's version time (version_at, or its expiry when that is later and has passed). */
  lastModified: Date;
};

/**
 * What building a pass reads of the app (context.ts's AppContext is one: services import no
 * context, so it is named by its shape here).
 */
export type PkpassApp = { config: Pick<Config, 'secretKey' | 'dataDir' | 'wallet'>; baseUrl: () => string };

/** A pass version's validators without its archive: what a conditional request needs (no signing). */
export type PkpassVersion = Omit<Pkpass, 'body'> & { content: PassContent; signing: AppleSigning };

/** Built passes of this process, by version (the ETag): ~6 KB each, so some 5,000 of them. */
const built = new LRUCache<string, Buffer>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (body) => body.length });
/** Images per brand name (a few KB, the same for every pass of the brand). */
const images = new LRUCache<string, PassImages>({ max: 256 });

/**
 * The version of this pass as it is now: its ETag (a hash of everything its pass.json says, its
 * images' brand and the signing certificate, so the same in every process), and its time.
 */
export async function pkpassVersionOf(app: PkpassApp, pass: WalletPass): Promise<PkpassVersion> {
  const { secretKey } = app.config;
  if (!secretKey)
    throw new Error('Apple passes need the server secret key (LOYALTY_SECRET_KEY) for their authenticationToken');
  const signing = await appleSigningOf(app.config);
  const content = passContentOf(pass, {
    baseUrl: app.baseUrl(),
    secretKey,
    passTypeId: signing.passTypeId,
    teamId: signing.teamId,
  });
  const digest = createHash('sha256')
    .update(JSON.stringify(content))
    .update(`\n${signing.fingerprint}`)
    .digest('base64url');
  return { etag: `"${digest.slice(0, 32)}"`, lastModified: versionTimeOf(pass), content, signing };
}

/** The archive of a version: from this process's cache, or signed now (a few milliseconds). */
export function pkpassBodyOf(version: PkpassVersion): Buffer {
  let body = built.get(version.etag);
  if (!body) {
    body = buildPkpass(version.content, version.signing);
    built.set(version.etag, body);
  }
  return body;
}

/** A pass changes when its row does (version_at: whole seconds, one per version) and when it expires, which changes no row. */
function versionTimeOf(pass: WalletPass): Date {
  const updated = new Date(pass.version_at);
  if (pass.status !== 'expired' || !pass.expiration_date) return updated;
  const expired = new Date(expiryInstantOf(pass.expiration_date).getTime() + 1000);
  return expired > updated ? expired : updated;
}

const SECTIONS = ['headerFields', 'primaryFields', 'secondaryFields', 'auxiliaryFields', 'backFields'] as const;

/** Signs the pass with passkit-generator: pass.json, images, manifest (SHA-1s), detached PKCS#7 signature; a zip. */
function buildPkpass(content: PassContent, signing: AppleSigning): Buffer {
  const brandName = content.props.organizationName;
  let files = images.get(brandName);
  if (!files) {
    files = passImagesOf(brandName);
    images.set(brandName, files);
  }
  const pkpass = new PKPass(
    { ...files },
    { wwdr: signing.wwdr, signerCert: signing.cert, signerKey: signing.key },
    content.props,
  );
  pkpass.type = content.style;
  for (const section of SECTIONS) pkpass[section].push(...content.fields[section]);
  pkpass.setBarcodes(content.barcode);
  if (content.expirationDate) pkpass.setExpirationDate(content.expirationDate);
  return pkpass.getAsBuffer();
}
