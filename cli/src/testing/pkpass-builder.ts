// Signed .pkpass archives for the wallet tests, built as Apple describes them: manifest.json of
// SHA-1s, a detached PKCS #7 signature of it (node-forge) by a pass-type certificate (UID = pass
// type id, OU = team id) issued by a test CA the tests generate, zipped with fflate. Each part can
// be changed or left out to plant one fault at a time.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { zipSync } from 'fflate';
import forge from 'node-forge';

export interface TestCertificate {
  pem: string;
  keyPem: string;
}

const keyPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
};

/** A self-signed CA certificate (like the sandbox's ca.pem, or Apple's WWDR for a real pass). */
export function testCa(name = 'Loyalty Test CA'): TestCertificate {
  const keys = keyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 86_400_000);
  const subject = [{ name: 'commonName', value: name }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { pem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** A pass-type certificate as Apple issues them: UID = pass type id, OU = team id. */
export function testSigner(
  ca: TestCertificate,
  options: { passTypeId?: string; teamId?: string; notBefore?: Date; notAfter?: Date } = {},
): TestCertificate {
  const { passTypeId = 'pass.dev.loyalty.sandbox', teamId = 'LOYALTYSBX' } = options;
  const keys = keyPair();
  const issuer = forge.pki.certificateFromPem(ca.pem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '0a';
  cert.validity.notBefore = options.notBefore ?? new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = options.notAfter ?? new Date(Date.now() + 365 * 86_400_000);
  cert.setSubject([
    { type: '0.9.2342.19200300.100.1.1', value: passTypeId },
    { name: 'commonName', value: `Pass Type ID: ${passTypeId}` },
    { name: 'organizationalUnitName', value: teamId },
    { name: 'organizationName', value: 'Loyalty Test' },
  ]);
  cert.setIssuer(issuer.subject.attributes);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { pem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** A detached PKCS #7 signature of `content` by `signer`, with `chain` in its certificates. */
export function detachedSignature(content: Buffer, signer: TestCertificate, chain: TestCertificate[]): Buffer {
  const p7 = forge.pkcs7.createSignedData();
  p7.content = forge.util.createBuffer(content.toString('binary'));
  const cert = forge.pki.certificateFromPem(signer.pem);
  p7.addCertificate(cert);
  for (const c of chain) p7.addCertificate(forge.pki.certificateFromPem(c.pem));
  p7.addSigner({
    key: forge.pki.privateKeyFromPem(signer.keyPem),
    certificate: cert,
    digestAlgorithm: forge.pki.oids.sha256 as string,
    authenticatedAttributes: [
      { type: forge.pki.oids.contentType as string, value: forge.pki.oids.data as string },
      { type: forge.pki.oids.messageDigest as string },
      { type: forge.pki.oids.signingTime as string, value: new Date() as unknown as string },
    ],
  });
  p7.sign({ detached: true });
  return Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary');
}

/** A small valid PNG (1×1, grey). */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==',
  'base64',
);

export function storecardPassJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    formatVersion: 1,
    passTypeIdentifier: 'pass.dev.loyalty.sandbox',
    serialNumber: '5b0e6c1e-6a53-4a8e-9d7a-1f0b1d2c3e4f',
    teamIdentifier: 'LOYALTYSBX',
    organizationName: 'Acme',
    description: 'Acme points card',
    authenticationToken: 'a-token-of-at-least-16-characters',
    webServiceURL: 'http://127.0.0.1:3000/wallet/apple',
    expirationDate: '2027-01-31T23:59:59Z',
    barcodes: [{ format: 'PKBarcodeFormatQR', message: 'QR-123', messageEncoding: 'iso-8859-1', altText: 'SC-123' }],
    storeCard: {
      primaryFields: [{ key: 'balance', label: 'Balance', value: 120, changeMessage: 'Balance %@' }],
      secondaryFields: [{ key: 'points', label: 'Points', value: 12 }],
    },
    ...overrides,
  };
}

export interface PassParts {
  /** The files of the pass (pass.json, images…), before the manifest. */
  files: Record<string, Buffer>;
  /** The manifest; default the SHA-1 of each file. */
  manifest?: Record<string, string> | Buffer | null;
  /** The signature; default a detached signature of the manifest by `signer`. null leaves it out. */
  signature?: Buffer | null;
}

/** Zips a pass from its parts, filling in the manifest and the signature unless given. */
export function buildPkpass(parts: PassParts, signer: TestCertificate, chain: TestCertificate[]): Buffer {
  const manifest =
    parts.manifest === undefined
      ? Buffer.from(
          JSON.stringify(
            Object.fromEntries(
              Object.entries(parts.files).map(([name, data]) => [name, createHash('sha1').update(data).digest('hex')]),
            ),
          ),
        )
      : parts.manifest === null
        ? undefined
        : Buffer.isBuffer(parts.manifest)
          ? parts.manifest
          : Buffer.from(JSON.stringify(parts.manifest));
  const entries: Record<string, Uint8Array> = { ...parts.files };
  if (manifest) entries['manifest.json'] = manifest;
  const signature =
    parts.signature === undefined ? manifest && detachedSignature(manifest, signer, chain) : parts.signature;
  if (signature) entries.signature = signature;
  return Buffer.from(zipSync(entries));
}

/** The files of a good storecard pass, pass.json as given. */
export function passFiles(passJson: Record<string, unknown> = storecardPassJson()): Record<string, Buffer> {
  return {
    'pass.json': Buffer.from(JSON.stringify(passJson)),
    'icon.png': PNG,
    'icon@2x.png': PNG,
    'logo.png': PNG,
  };
}
