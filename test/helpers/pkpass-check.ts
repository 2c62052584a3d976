import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A `.pkpass` opened and checked with tools this project did not write: `unzip` lists and
 * extracts it, `sha1sum` recomputes the manifest's hashes, `openssl cms -verify` checks the
 * detached signature of manifest.json against a CA. Apple's documented pass.json keys
 * ("Pass" and "PassFieldContent" in Apple's Wallet Passes reference) are listed here to check against.
 */
export type OpenedPkpass = {
  /** File names as `unzip -l` lists them. */
  files: string[];
  passJson: Record<string, any>;
  manifest: Record<string, string>;
  /** Manifest entries whose SHA-1 (sha1sum) differs, and archive files the manifest lacks. */
  hashProblems: string[];
  /** openssl's verdict on the signature: '' when it verified, else its error output. */
  signatureProblem: string;
  /** The signer certificate's subject as openssl prints it. */
  signerSubject: string;
  /** Width×height of each PNG, read from its header. */
  imageSizes: Record<string, string>;
};

/** Every top-level key Apple documents for pass.json (a key outside this list is ignored by Wallet at best). */
export const APPLE_PASS_KEYS = new Set([
  'accessibilityURL',
  'addOnURL',
  'appLaunchURL',
  'associatedStoreIdentifiers',
  'auxiliaryStoreIdentifiers',
  'authenticationToken',
  'backgroundColor',
  'bagPolicyURL',
  'barcode',
  'barcodes',
  'beacons',
  'boardingPass',
  'changeSeatURL',
  'coupon',
  'description',
  'eventTicket',
  'expirationDate',
  'foregroundColor',
  'formatVersion',
  'generic',
  'groupingIdentifier',
  'labelColor',
  'locations',
  'logoText',
  'maxDistance',
  'nfc',
  'organizationName',
  'passTypeIdentifier',
  'preferredStyleSchemes',
  'relevantDate',
  'relevantDates',
  'semantics',
  'serialNumber',
  'sharingProhibited',
  'storeCard',
  'stripColor',
  'suppressStripShine',
  'teamIdentifier',
  'userInfo',
  'voided',
  'webServiceURL',
]);
export const APPLE_REQUIRED_PASS_KEYS = [
  'description',
  'formatVersion',
  'organizationName',
  'passTypeIdentifier',
  'serialNumber',
  'teamIdentifier',
];
export const APPLE_PASS_STYLES = ['boardingPass', 'coupon', 'eventTicket', 'generic', 'storeCard'];
export const APPLE_FIELD_KEYS = new Set([
  'attributedValue',
  'changeMessage',
  'currencyCode',
  'dataDetectorTypes',
  'dateStyle',
  'ignoresTimeZone',
  'isRelative',
  'key',
  'label',
  'numberStyle',
  'row',
  'semantics',
  'textAlignment',
  'timeStyle',
  'value',
]);
/** Apple: a W3C date-time (ISO 8601 with a time zone). */
export const W3C_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Problems of pass.json against Apple's documented keys: unknown or missing keys, not one style, fields without key/value. */
export function applePassJsonProblems(pass: Record<string, any>): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(pass)) if (!APPLE_PASS_KEYS.has(key)) problems.push(`unknown key ${key}`);
  for (const key of APPLE_REQUIRED_PASS_KEYS) if (pass[key] === undefined) problems.push(`missing ${key}`);
  const styles = APPLE_PASS_STYLES.filter((s) => pass[s] !== undefined);
  if (styles.length !== 1) problems.push(`styles: ${styles.join(', ') || 'none'}`);
  if (pass.formatVersion !== 1) problems.push('formatVersion is not 1');
  if (pass.authenticationToken !== undefined && String(pass.authenticationToken).length < 16)
    problems.push('authenticationToken shorter than 16');
  for (const key of ['expirationDate', 'relevantDate'])
    if (pass[key] !== undefined && !W3C_DATE_TIME.test(pass[key])) problems.push(`${key} is no W3C date-time`);
  const style = pass[styles[0] ?? ''] ?? {};
  for (const [section, fields] of Object.entries(style))
    for (const field of fields as Record<string, unknown>[]) {
      if (typeof field.key !== 'string' || field.value === undefined)
        problems.push(`${section}: a field without key or value`);
      for (const k of Object.keys(field))
        if (!APPLE_FIELD_KEYS.has(k)) problems.push(`${section}.${field.key}: unknown ${k}`);
    }
  return problems;
}

const run = (cmd: string, args: string[], cwd?: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8' });

export function openPkpass(body: Buffer, caPem: string): OpenedPkpass {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pkpass-check-'));
  try {
    const archive = path.join(dir, 'pass.pkpass');
    writeFileSync(archive, body);
    writeFileSync(path.join(dir, 'ca.pem'), caPem);
    const listing = run('unzip', ['-Z1', archive]).split('\n').filter(Boolean);
    const out = path.join(dir, 'x');
    run('unzip', ['-q', archive, '-d', out]);
    const passJson = JSON.parse(run('unzip', ['-p', archive, 'pass.json']));
    const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8')) as Record<string, string>;
    const hashProblems: string[] = [];
    for (const file of listing.filter((f) => f !== 'manifest.json' && f !== 'signature')) {
      const sha1 = run('sha1sum', [file], out).split(' ')[0];
      if (manifest[file] !== sha1) hashProblems.push(`${file}: manifest ${manifest[file]}, sha1sum ${sha1}`);
    }
    for (const file of Object.keys(manifest))
      if (!listing.includes(file)) hashProblems.push(`${file}: not in the archive`);
    let signatureProblem = '';
    try {
      execFileSync(
        'openssl',
        'cms -verify -inform DER -in signature -content manifest.json -binary -CAfile ../ca.pem -purpose any -signer signer.pem -out /dev/null'.split(
          ' ',
        ),
        { cwd: out, stdio: ['ignore', 'pipe', 'pipe'] },
      );
    } catch (error) {
      signatureProblem = String((error as { stderr?: Buffer }).stderr ?? error) || 'failed';
    }
    const signerSubject = signatureProblem
      ? ''
      : run('openssl', ['x509', '-in', 'signer.pem', '-noout', '-subject', '-nameopt', 'RFC2253'], out).trim();
    const imageSizes: Record<string, string> = {};
    for (const file of listing.filter((f) => f.endsWith('.png'))) {
      const png = readFileSync(path.join(out, file));
      imageSizes[file] = `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
    }
    return { files: listing, passJson, manifest, hashProblems, signatureProblem, signerSubject, imageSizes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
