import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { SANDBOX_PASS_TYPE_ID, SANDBOX_TEAM_ID } from './pass-identity.js';

/**
 * The sandbox's own pass signing: a test certificate authority and a pass-signing certificate it
 * issued, shaped like Apple's (subject UID = pass type id, OU = team id, CN "Pass Type ID: …",
 * Apple's pass type extension), so a pass's signature is real in shape and verifies against the
 * CA with openssl. No iPhone trusts this CA: such a pass shows in tools, never in Wallet.
 * node-forge makes the certificates (node:crypto cannot); node:crypto makes the keys (fast).
 */
export type SandboxCertificates = {
  caCert: string;
  passCert: string;
  passKey: string;
};

const generateRsa = promisify(generateKeyPair);
/** Apple's OIDs: the Pass Type ID certificate's extended key usage, and the extension naming its pass type. */
const APPLE_PASS_TYPE_EKU = '1.2.840.113635.100.4.14';
const APPLE_PASS_TYPE_EXTENSION = '1.2.840.113635.100.6.1.16';
const UID = '0.9.2342.19200300.100.1.1';
const YEARS = 10;

async function rsaKeys() {
  const { privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  return { pem: privateKey, key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e) };
}

function certificateBase(publicKey: forge.pki.PublicKey) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive, random, 16 bytes: two sandboxes never share a serial.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now.getTime() + YEARS * 365 * 86_400_000);
  return cert;
}

/** A new CA and a pass certificate of the sandbox's pass type and team, issued by it (PEM). */
export async function generateSandboxCertificates(): Promise<SandboxCertificates> {
  const [ca, pass] = await Promise.all([rsaKeys(), rsaKeys()]);

  const caCert = certificateBase(ca.publicKey);
  const caName = [
    { name: 'commonName', value: 'Loyalty Sandbox Wallet CA (not Apple; test only)' },
    { name: 'organizationName', value: 'Loyalty toolkit sandbox' },
  ];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(ca.key, forge.md.sha256.create());

  const passCert = certificateBase(pass.publicKey);
  passCert.setSubject([
    { type: UID, value: SANDBOX_PASS_TYPE_ID },
    { name: 'commonName', value: `Pass Type ID: ${SANDBOX_PASS_TYPE_ID}` },
    { name: 'organizationalUnitName', value: SANDBOX_TEAM_ID },
    { name: 'organizationName', value: 'Loyalty toolkit sandbox' },
  ]);
  passCert.setIssuer(caName);
  passCert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, critical: true },
    { name: 'extKeyUsage', [APPLE_PASS_TYPE_EKU]: true },
    {
      id: APPLE_PASS_TYPE_EXTENSION,
      value: forge.asn1.toDer(
        forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.UTF8, false, SANDBOX_PASS_TYPE_ID),
      ).data,
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  passCert.sign(ca.key, forge.md.sha256.create());

  // forge writes CRLF line ends; openssl and node write LF, and so does this.
  const lf = (pem: string) => pem.replaceAll('\r\n', '\n');
  return {
    caCert: lf(forge.pki.certificateToPem(caCert)),
    passCert: lf(forge.pki.certificateToPem(passCert)),
    passKey: pass.pem,
  };
}
