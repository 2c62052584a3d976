/**
 * Hex, base64 and UTF-8 without `Buffer`, for webhook verification in any runtime. The base64
 * decoder reads what `Buffer.from(text, 'base64')` reads (sdk/src/webhooks-web.test.ts checks
 * it against Node on arbitrary strings), so Node and Web Crypto verification accept the same headers.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Six-bit value of each character code; -1 for characters outside both base64 alphabets. */
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;
SEXTET['-'.charCodeAt(0)] = 62; // base64url
SEXTET['_'.charCodeAt(0)] = 63;

/**
 * Node's lenient base64 decoding: both alphabets, characters outside them skipped, the first `=`
 * ends the input, and bits that do not fill a byte dropped. Node reads each UTF-16 code unit by
 * its low byte (`ī`, U+012B, counts as `+`), and so does this.
 */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(Math.ceil((text.length * 3) / 4));
  let length = 0;
  let bits = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) & 0xff;
    if (code === 61) break; // '='
    const sextet = code < 128 ? (SEXTET[code] as number) : -1;
    if (sextet < 0) continue;
    bits = (bits << 6) | sextet;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out[length++] = (bits >> count) & 0xff;
    }
  }
  return out.subarray(0, length);
}

export function encodeBase64(bytes: Uint8Array): string {
  const at = (n: number) => ALPHABET.charAt(n & 63);
  let text = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    text += at(n >> 18) + at(n >> 12) + at(n >> 6) + at(n);
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = ((bytes[i] as number) << 16) | (rest === 2 ? (bytes[i + 1] as number) << 8 : 0);
    text += `${at(n >> 18)}${at(n >> 12)}${rest === 2 ? at(n >> 6) : '='}=`;
  }
  return text;
}

/** Value of each hex digit's character code (any case); -1 for other characters. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;
  NIBBLE['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** The 32 bytes of a hex HMAC-SHA256 (64 hex digits, any case), or undefined when it is not one. */
export function decodeHexDigest(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length !== 64) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    const hi = text.charCodeAt(2 * i);
    const lo = text.charCodeAt(2 * i + 1);
    const byte = hi < 128 && lo < 128 ? ((NIBBLE[hi] as number) << 4) | (NIBBLE[lo] as number) : -1;
    if (byte < 0) return undefined;
    out[i] = byte;
  }
  return out;
}

const encoder = new TextEncoder();
// ignoreBOM keeps a leading byte order mark, as Buffer#toString does (JSON.parse then rejects it).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

export const utf8 = (text: string): Uint8Array<ArrayBuffer> => encoder.encode(text);
export const textOfUtf8 = (raw: string | Uint8Array): string => (typeof raw === 'string' ? raw : decoder.decode(raw));
