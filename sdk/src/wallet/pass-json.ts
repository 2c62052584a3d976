/**
 * `pass.json` as Apple documents it (the keys this SDK reads; others pass through) and a
 * `.pkpass` opened into it and its files.
 */
import { readZip, ZipFormatError } from './zip.js';

/** One field of a pass (`headerFields`, `primaryFields`, …). */
export interface PassField {
  key: string;
  value: string | number;
  label?: string;
  /** Shown on the lock screen when the value changes; `%@` stands for the new value. */
  changeMessage?: string;
  [other: string]: unknown;
}

/** The fields of a pass style (`coupon`, `storeCard`, …). */
export interface PassStructure {
  headerFields?: PassField[];
  primaryFields?: PassField[];
  secondaryFields?: PassField[];
  auxiliaryFields?: PassField[];
  backFields?: PassField[];
  [other: string]: unknown;
}

export interface PassBarcode {
  format: string;
  message: string;
  messageEncoding: string;
  altText?: string;
}

/** The styles a pass may have: exactly one of these keys is in its `pass.json`. */
export const PASS_STYLES = ['boardingPass', 'coupon', 'eventTicket', 'generic', 'storeCard'] as const;
export type PassStyle = (typeof PASS_STYLES)[number];

/** `pass.json`: the keys the SDK reads, typed; any other key is kept as it is. */
export interface PassJson {
  formatVersion: number;
  passTypeIdentifier: string;
  serialNumber: string;
  teamIdentifier: string;
  organizationName: string;
  description: string;
  authenticationToken?: string;
  webServiceURL?: string;
  expirationDate?: string;
  relevantDate?: string;
  voided?: boolean;
  barcodes?: PassBarcode[];
  barcode?: PassBarcode;
  coupon?: PassStructure;
  storeCard?: PassStructure;
  generic?: PassStructure;
  eventTicket?: PassStructure;
  boardingPass?: PassStructure;
  [other: string]: unknown;
}

/** A `.pkpass` opened: its parsed `pass.json` and every file of the archive by name. */
export interface Pkpass {
  passJson: PassJson;
  files: Map<string, Buffer>;
}

/** The `.pkpass` is not a zip, or has no readable `pass.json`. */
export class PkpassFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PkpassFormatError';
  }
}

/**
 * Opens a `.pkpass` (a zip archive): its files by name and `pass.json` parsed. Checks nothing of
 * the signature or manifest (`loyalty wallet inspect` does); throws `PkpassFormatError` when the
 * archive cannot be read or `pass.json` is missing or not a JSON object.
 */
export function readPkpass(buffer: Buffer | Uint8Array | ArrayBuffer): Pkpass {
  const bytes = Buffer.isBuffer(buffer)
    ? buffer
    : buffer instanceof ArrayBuffer
      ? Buffer.from(buffer)
      : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let files: Map<string, Buffer>;
  try {
    files = readZip(bytes);
  } catch (error) {
    if (error instanceof ZipFormatError) throw new PkpassFormatError(`not a readable .pkpass: ${error.message}`);
    throw error;
  }
  const raw = files.get('pass.json');
  if (!raw) throw new PkpassFormatError('the .pkpass has no pass.json');
  let passJson: unknown;
  try {
    passJson = JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new PkpassFormatError(`pass.json is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof passJson !== 'object' || passJson === null || Array.isArray(passJson))
    throw new PkpassFormatError('pass.json is not a JSON object');
  return { passJson: passJson as PassJson, files };
}

/** Where on the pass a field is shown. */
export type PassFieldArea = 'header' | 'primary' | 'secondary' | 'auxiliary' | 'back';
const AREAS: readonly PassFieldArea[] = ['header', 'primary', 'secondary', 'auxiliary', 'back'];

/** A field of a pass with the area it is shown in. */
export type FlatPassField = PassField & { area: PassFieldArea };

/** The style of a pass: the first of `PASS_STYLES` its `pass.json` has, if any. */
export function passStyleOf(passJson: PassJson): PassStyle | undefined {
  return PASS_STYLES.find((style) => typeof passJson[style] === 'object' && passJson[style] !== null);
}

/**
 * Every field of the pass's style, header to back, each with its `area`: what a wallet shows
 * and what `diffPasses` compares by `key`.
 */
export function passFields(passJson: PassJson): FlatPassField[] {
  const style = passStyleOf(passJson);
  const structure = style ? (passJson[style] as PassStructure) : undefined;
  if (!structure) return [];
  return AREAS.flatMap((area) => {
    const fields = structure[`${area}Fields`];
    return Array.isArray(fields)
      ? fields
          .filter((f): f is PassField => typeof f === 'object' && f !== null && typeof f.key === 'string')
          .map((f) => ({ ...f, area }))
      : [];
  });
}
