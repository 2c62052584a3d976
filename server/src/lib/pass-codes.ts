import { randomBytes } from 'node:crypto';

/** Crockford base32: no I, L, O or U, so a code read aloud or typed at a till is unambiguous. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A pass code (also the code in the pass's QR code and the last part of its wallet URL):
 * 16 characters of Crockford base32 from 10 bytes of crypto randomness, i.e. 80 bits, so codes
 * cannot be guessed or enumerated. The database keeps them unique (passes.pass_code UNIQUE).
 */
export function newPassCode(): string {
  return encodeBase32(randomBytes(10));
}

/** `n` fresh pass codes (one randomBytes call). */
export function newPassCodes(n: number): string[] {
  const bytes = randomBytes(10 * n);
  return Array.from({ length: n }, (_, i) => encodeBase32(bytes.subarray(i * 10, i * 10 + 10)));
}

/** The page where the member adds the pass to a mobile wallet. */
export const walletUrl = (baseUrl: string, passCode: string): string =>
  `${baseUrl.replace(/\/+$/, '')}/wallet/${passCode}`;

/** The page of a webshop promotion code. */
export const promotionCodeUrl = (baseUrl: string, code: string): string =>
  `${baseUrl.replace(/\/+$/, '')}/promotion-codes/${code}`;

/** Base32 of whole 5-byte groups (40 bits → 8 characters). */
function encodeBase32(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i + 5 <= bytes.length; i += 5) {
    let group = 0n;
    for (const byte of bytes.subarray(i, i + 5)) group = (group << 8n) | BigInt(byte);
    for (let shift = 35n; shift >= 0n; shift -= 5n) out += ALPHABET[Number((group >> shift) & 31n)];
  }
  return out;
}
