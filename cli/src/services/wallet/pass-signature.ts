// The detached PKCS #7 signature of a pass's manifest.json and the certificates behind it:
// verified with PKI.js (CMS SignedData over WebCrypto), the chain and dates with node:crypto's
// X509Certificate. Each finding is a problem with its fix (inspect-pass.ts collects them).
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { PassProblem } from './pass-problems.js';

const SIGNED_DATA = '1.2.840.113549.1.7.2';

/** The name of Apple's intermediate that issues pass-type certificates. */
export const APPLE_WWDR = 'Apple Worldwide Developer Relations Certification Authority';

export interface SignatureFindings {
  problems: PassProblem[];
  /** The signer's certificate, when the signature names one. */
  signer?: X509Certificate;
  /** What the chain was checked against, said for the report. */
  checkedAgainst: string;
}

/** The attributes of a certificate's subject (`UID`, `OU`, `CN`…), first value of each. */
export function subjectOf(cert: X509Certificate): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of cert.subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) fields[line.slice(0, eq)] ??= line.slice(eq + 1);
  }
  return fields;
}

const nameOf = (cert: X509Certificate) => {
  const s = subjectOf(cert);
  return s.CN ?? cert.subject.replaceAll('\n', ', ');
};

/** Every certificate in PEM text (a file may hold several). */
export function certificatesFromPem(pem: string): X509Certificate[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map(
    (m) => new X509Certificate(m[0]),
  );
}

const issues = (issuer: X509Certificate, cert: X509Certificate) =>
  cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/**
 * Checks `signature` (DER) over `manifest`: that it parses, that it verifies, that the signer's
 * certificate leads to one of `anchors` (or, without anchors, to Apple's WWDR certificate by
 * name) through the certificates it carries, and that each is valid at `now`.
 */
export async function checkSignature(
  signature: Buffer,
  manifest: Buffer,
  anchors: X509Certificate[] | undefined,
  now: Date,
): Promise<SignatureFindings> {
  const checkedAgainst = anchors
    ? `the CA given (${anchors.map(nameOf).join(', ')})`
    : `${APPLE_WWDR} by name only (give --ca with Apple's WWDR certificate, or a server's sandbox ca.pem, to check it cryptographically)`;
  const invalid = (message: string): SignatureFindings => ({
    checkedAgainst,
    problems: [
      {
        code: 'signature_invalid',
        message: `The signature is not valid: ${message}.`,
        fix: 'Sign manifest.json again, as it is in the archive, with the pass-type certificate and its key (a detached PKCS #7 signature, DER).',
      },
    ],
  });
  let signed: pkijs.SignedData;
  try {
    const asn1 = asn1js.fromBER(new Uint8Array(signature));
    if (asn1.offset === -1) return invalid('it is not DER');
    const info = new pkijs.ContentInfo({ schema: asn1.result });
    if (info.contentType !== SIGNED_DATA) return invalid('it is not PKCS #7 signed data');
    signed = new pkijs.SignedData({ schema: info.content });
  } catch (error) {
    return invalid(`it does not parse (${(error as Error).message})`);
  }
  if (signed.signerInfos.length === 0) return invalid('it has no signer');
  const carried = (signed.certificates ?? [])
    .filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate)
    .map((c) => new X509Certificate(Buffer.from(c.toSchema().toBER(false))));
  let verified: pkijs.SignedDataVerifyResult;
  try {
    verified = await signed.verify({
      signer: 0,
      data: new Uint8Array(manifest).buffer,
      extendedMode: true,
      checkChain: false,
    });
  } catch (error) {
    const failure = error as { message?: string; code?: number };
    return invalid(failure.message ?? String(error));
  }
  const signer = verified.signerCertificate
    ? new X509Certificate(Buffer.from(verified.signerCertificate.toSchema().toBER(false)))
    : undefined;
  if (!verified.signatureVerified)
    return { ...invalid(verified.message || 'it does not match manifest.json'), ...(signer ? { signer } : {}) };
  if (!signer) return invalid('the certificate of its signer is not in it');

  const problems: PassProblem[] = [];
  // The chain: from the signer, through the certificates the signature carries, to an anchor.
  const chain = [signer];
  let reached: X509Certificate | undefined;
  for (let link = signer; chain.length < 8; ) {
    const anchor = anchors?.find((a) => a.fingerprint256 === link.fingerprint256 || issues(a, link));
    if (anchor) {
      reached = anchor;
      break;
    }
    if (!anchors && subjectOf(link).CN?.startsWith(APPLE_WWDR) && link !== signer) {
      reached = link;
      break;
    }
    const next = carried.find((c) => c.fingerprint256 !== link.fingerprint256 && issues(c, link));
    if (!next) break;
    chain.push(next);
    link = next;
  }
  if (!reached)
    problems.push({
      code: 'certificate_chain',
      message: `The signer's certificate (${nameOf(signer)}, issued by ${signer.issuer.replaceAll('\n', ', ')}) does not lead to ${anchors ? 'the CA given' : APPLE_WWDR}.`,
      fix: anchors
        ? 'Sign with a pass-type certificate issued by that CA (for a sandbox pass: the ca.pem of the server that made it), or check against the CA that did issue it.'
        : "Put Apple's WWDR intermediate certificate (G4) into the signature's certificates, and sign with a pass-type certificate from the Apple Developer account.",
    });
  for (const cert of chain) {
    const from = new Date(cert.validFrom);
    const to = new Date(cert.validTo);
    const whose = cert === signer ? "The signer's certificate" : `The certificate ${nameOf(cert)}`;
    if (to < now)
      problems.push({
        code: 'certificate_expired',
        message: `${whose} expired on ${to.toISOString()}.`,
        fix:
          cert === signer
            ? 'Renew the pass-type certificate (Apple Developer account, Certificates) and sign the pass again.'
            : 'Use the current WWDR intermediate certificate (G4) and sign the pass again.',
      });
    else if (from > now)
      problems.push({
        code: 'certificate_not_yet_valid',
        message: `${whose} is valid only from ${from.toISOString()}.`,
        fix: "Check the signing machine's clock, or wait until the certificate is valid.",
      });
  }
  return { problems, signer, checkedAgainst };
}
