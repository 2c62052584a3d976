// What makes a .pkpass fail to install, checked offline: the archive, manifest.json's SHA-1s,
// the signature and its certificates, pass.json's required keys, ids, dates, barcodes and images.
// Apple's rules: developer.apple.com/documentation/walletpasses (Pass, Building a pass,
// Distributing and updating a pass).
import { createHash, type X509Certificate } from 'node:crypto';
import { PASS_STYLES, type PassJson, readZip, ZipFormatError } from '@loyalty/sdk/wallet';
import type { PassProblem } from './pass-problems.js';
import { checkSignature, subjectOf } from './pass-signature.js';

export interface InspectOptions {
  /** Trust anchors for the signature's chain (--ca); without them, Apple's WWDR by name. */
  ca?: X509Certificate[];
  now?: Date;
}

export interface Inspection {
  problems: PassProblem[];
  /** What was looked at, for the report: files, the signer, what the chain was checked against. */
  checked: {
    files: string[];
    signer?: { subject: string; valid_to: string };
    /** What the signature's chain was checked against; null when there was no signature of a manifest. */
    chain: string | null;
  };
  passJson?: PassJson;
}

/** The files a manifest does not list: itself and the signature. */
const UNSIGNED = new Set(['manifest.json', 'signature']);

/** W3C date-time (ISO 8601 with seconds optional and a time zone), as Apple asks for dates. */
const W3C_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const BARCODE_FORMATS = [
  'PKBarcodeFormatQR',
  'PKBarcodeFormatPDF417',
  'PKBarcodeFormatAztec',
  'PKBarcodeFormatCode128',
];

/** The encodings a barcode message may name that this check can test a message against. */
const LATIN1 = new Set(['iso-8859-1', 'latin1', 'iso-latin-1']);

export async function inspectPkpass(buffer: Buffer, options: InspectOptions = {}): Promise<Inspection> {
  const now = options.now ?? new Date();
  const problems: PassProblem[] = [];
  const checked: Inspection['checked'] = { files: [], chain: null };
  let files: Map<string, Buffer>;
  try {
    files = readZip(buffer);
  } catch (error) {
    if (!(error instanceof ZipFormatError)) throw error;
    return {
      problems: [
        {
          code: 'not_a_pkpass',
          message: `Not a readable .pkpass: ${error.message}.`,
          fix: 'A .pkpass is a zip archive of pass.json, images, manifest.json and signature at its top level.',
        },
      ],
      checked,
    };
  }
  const passJson = parsePassJson(files.get('pass.json'), problems);
  checked.files = [...files.keys()];

  const manifestBytes = files.get('manifest.json');
  if (!manifestBytes)
    problems.push({
      code: 'manifest_missing',
      message: 'manifest.json is missing.',
      fix: 'Add manifest.json: a JSON object of every other file (signature aside) and its SHA-1 in hex.',
    });
  else problems.push(...checkManifest(manifestBytes, files));

  const signature = files.get('signature');
  if (!signature)
    problems.push({
      code: 'signature_missing',
      message: 'The signature file is missing.',
      fix: 'Sign manifest.json with the pass-type certificate (detached PKCS #7, DER) and add it as "signature".',
    });
  else if (manifestBytes) {
    const found = await checkSignature(signature, manifestBytes, options.ca, now);
    problems.push(...found.problems);
    checked.chain = found.checkedAgainst;
    if (found.signer) {
      checked.signer = { subject: found.signer.subject.replaceAll('\n', ', '), valid_to: found.signer.validTo };
      if (passJson) problems.push(...checkIds(passJson, found.signer));
    }
  }

  if (passJson) problems.push(...checkPassJson(passJson));
  if (!files.has('icon.png'))
    problems.push({
      code: 'image_missing',
      message: 'icon.png is missing: iOS does not install a pass without it.',
      fix: 'Add icon.png (29×29 points; icon@2x.png 58×58 px, icon@3x.png 87×87 px) and list it in manifest.json.',
    });
  return { problems, checked, ...(passJson ? { passJson } : {}) };
}

/** pass.json parsed, or a problem saying why it cannot be. */
function parsePassJson(bytes: Buffer | undefined, problems: PassProblem[]): PassJson | undefined {
  const fix = 'Put a pass.json (a JSON object, UTF-8) at the top level of the archive.';
  if (!bytes) {
    problems.push({ code: 'pass_json_invalid', message: 'pass.json is missing.', fix });
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    problems.push({ code: 'pass_json_invalid', message: `pass.json is not JSON: ${(error as Error).message}.`, fix });
    return undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as PassJson;
  problems.push({ code: 'pass_json_invalid', message: 'pass.json is not a JSON object.', fix });
  return undefined;
}

function checkManifest(bytes: Buffer, files: Map<string, Buffer>): PassProblem[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(bytes.toString('utf8'));
  } catch {}
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest))
    return [
      {
        code: 'manifest_invalid',
        message: 'manifest.json is not a JSON object.',
        fix: 'Write manifest.json as {"<file name>": "<SHA-1 of its bytes, hex>", …}.',
      },
    ];
  const listed = manifest as Record<string, unknown>;
  const problems: PassProblem[] = [];
  for (const [name, data] of files) {
    if (UNSIGNED.has(name)) continue;
    const hash = listed[name];
    if (hash === undefined)
      problems.push({
        code: 'manifest_unlisted_file',
        message: `${name} is in the archive but not in manifest.json.`,
        fix: `Add "${name}" with its SHA-1 to manifest.json (and sign again), or remove the file.`,
      });
    else if (typeof hash !== 'string' || hash.toLowerCase() !== createHash('sha1').update(data).digest('hex'))
      problems.push({
        code: 'manifest_hash',
        message: `${name}: its SHA-1 is ${createHash('sha1').update(data).digest('hex')}, manifest.json says ${JSON.stringify(hash)}.`,
        fix: 'The file changed after the manifest was made: build manifest.json from the files as zipped, then sign it again.',
      });
  }
  for (const name of Object.keys(listed))
    if (!files.has(name))
      problems.push({
        code: 'manifest_extra_entry',
        message: `manifest.json lists ${name}, which is not in the archive.`,
        fix: `Add ${name} to the archive or remove it from manifest.json (and sign again).`,
      });
  return problems;
}

function checkIds(pass: PassJson, signer: X509Certificate): PassProblem[] {
  const subject = subjectOf(signer);
  const problems: PassProblem[] = [];
  if (typeof pass.passTypeIdentifier === 'string' && subject.UID !== pass.passTypeIdentifier)
    problems.push({
      code: 'pass_type_mismatch',
      message: `passTypeIdentifier is ${JSON.stringify(pass.passTypeIdentifier)}, the certificate is for ${JSON.stringify(subject.UID ?? null)} (its UID).`,
      fix: "Set passTypeIdentifier to the certificate's pass type id, or sign with that pass type's certificate.",
    });
  if (typeof pass.teamIdentifier === 'string' && subject.OU !== pass.teamIdentifier)
    problems.push({
      code: 'team_mismatch',
      message: `teamIdentifier is ${JSON.stringify(pass.teamIdentifier)}, the certificate's team is ${JSON.stringify(subject.OU ?? null)} (its OU).`,
      fix: "Set teamIdentifier to the certificate's team id (the OU of its subject).",
    });
  return problems;
}

const REQUIRED_STRINGS = [
  'passTypeIdentifier',
  'serialNumber',
  'teamIdentifier',
  'organizationName',
  'description',
] as const;

function checkPassJson(pass: PassJson): PassProblem[] {
  const problems: PassProblem[] = [];
  if (pass.formatVersion === undefined)
    problems.push({ code: 'key_missing', message: 'pass.json has no formatVersion.', fix: 'Add "formatVersion": 1.' });
  else if (pass.formatVersion !== 1)
    problems.push({
      code: 'key_invalid',
      message: `formatVersion is ${JSON.stringify(pass.formatVersion)}.`,
      fix: 'Set "formatVersion": 1 (a number).',
    });
  for (const key of REQUIRED_STRINGS)
    if (typeof pass[key] !== 'string' || pass[key] === '')
      problems.push({
        code: 'key_missing',
        message: `pass.json has no ${key}${pass[key] === undefined ? '' : ' string'}.`,
        fix: `Add "${key}" (a non-empty string).`,
      });
  const styles = PASS_STYLES.filter((style) => pass[style] !== undefined);
  if (styles.length !== 1)
    problems.push({
      code: styles.length ? 'key_invalid' : 'key_missing',
      message: styles.length
        ? `pass.json has ${styles.length} styles (${styles.join(', ')}).`
        : 'pass.json has no style key.',
      fix: `Give exactly one of ${PASS_STYLES.join(', ')}, holding the pass's fields.`,
    });
  if (pass.webServiceURL !== undefined) {
    if (typeof pass.authenticationToken !== 'string' || pass.authenticationToken.length < 16)
      problems.push({
        code: 'key_invalid',
        message: 'pass.json has a webServiceURL but no authenticationToken of 16 characters or more.',
        fix: 'Add an authenticationToken (at least 16 characters), or remove webServiceURL.',
      });
  }
  for (const key of ['expirationDate', 'relevantDate'] as const) {
    const value = pass[key];
    if (
      value !== undefined &&
      (typeof value !== 'string' || !W3C_DATE_TIME.test(value) || Number.isNaN(Date.parse(value)))
    )
      problems.push({
        code: 'date_format',
        message: `${key} ${JSON.stringify(value)} is not a W3C date-time.`,
        fix: `Write ${key} as a date and time with a time zone, e.g. "2026-12-31T23:59:59Z" or "2026-12-31T23:59:59+01:00".`,
      });
  }
  if (pass.voided !== undefined && typeof pass.voided !== 'boolean')
    problems.push({
      code: 'key_invalid',
      message: 'voided is not a boolean.',
      fix: 'Write "voided": true or leave it out.',
    });
  const barcodes = [...(Array.isArray(pass.barcodes) ? pass.barcodes : []), ...(pass.barcode ? [pass.barcode] : [])];
  if (pass.barcodes !== undefined && !Array.isArray(pass.barcodes))
    problems.push({
      code: 'barcode_format',
      message: 'barcodes is not an array.',
      fix: 'Write "barcodes": [{"format": …, "message": …, "messageEncoding": "iso-8859-1"}].',
    });
  for (const [i, barcode] of barcodes.entries()) problems.push(...checkBarcode(barcode, `barcodes[${i}]`));
  return problems;
}

function checkBarcode(barcode: unknown, where: string): PassProblem[] {
  if (typeof barcode !== 'object' || barcode === null)
    return [
      {
        code: 'barcode_format',
        message: `${where} is not an object.`,
        fix: 'Give format, message and messageEncoding.',
      },
    ];
  const { format, message, messageEncoding } = barcode as Record<string, unknown>;
  const problems: PassProblem[] = [];
  if (typeof format !== 'string' || !BARCODE_FORMATS.includes(format))
    problems.push({
      code: 'barcode_format',
      message: `${where}.format ${JSON.stringify(format ?? null)} is not a barcode format of Apple Wallet.`,
      fix: `Use one of ${BARCODE_FORMATS.join(', ')}.`,
    });
  if (typeof message !== 'string' || message === '')
    problems.push({
      code: 'barcode_message',
      message: `${where}.message is ${message === undefined ? 'missing' : 'empty or not a string'}.`,
      fix: 'Put the text the scanner should read into message.',
    });
  if (typeof messageEncoding !== 'string' || messageEncoding === '')
    problems.push({
      code: 'barcode_encoding',
      message: `${where}.messageEncoding is missing.`,
      fix: 'Add "messageEncoding": "iso-8859-1" (the usual one), or another IANA character set name.',
    });
  else if (
    typeof message === 'string' &&
    LATIN1.has(messageEncoding.toLowerCase()) &&
    [...message].some((c) => (c.codePointAt(0) ?? 0) > 0xff)
  )
    problems.push({
      code: 'barcode_encoding',
      message: `${where}.message has characters that ${messageEncoding} cannot encode.`,
      fix: 'Use "messageEncoding": "utf-8", or keep the message to Latin-1 characters.',
    });
  else if (format === 'PKBarcodeFormatCode128' && typeof message === 'string' && /[^\u0020-\u007e]/.test(message))
    problems.push({
      code: 'barcode_message',
      message: `${where}.message has characters a Code 128 barcode cannot carry.`,
      fix: 'Keep a Code 128 message to printable ASCII, or use PKBarcodeFormatQR.',
    });
  return problems;
}
