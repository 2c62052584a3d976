/**
 * A small reader of zip archives (a `.pkpass` is one), from the central directory: stored and
 * deflated entries, each checked against its CRC-32 and size. Written here rather than taken
 * from a zip library because the SDK's only runtime dependency is openapi-fetch (sdk/package.json)
 * and a pass needs little of the format: no zip64 (a pass is a few hundred KB), no encryption, no
 * spanning. `node:zlib` inflates (inflateRawSync) and checksums (crc32, Node ≥ 22.2).
 */
import { crc32, inflateRawSync } from 'node:zlib';

/** The archive is not a zip this reader can open; `message` says what is wrong. */
export class ZipFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZipFormatError';
  }
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const MAX_END_SEARCH = 22 + 0xffff;

function endOfCentralDirectory(zip: Buffer): number {
  const stop = Math.max(0, zip.length - MAX_END_SEARCH);
  for (let at = zip.length - 22; at >= stop; at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new ZipFormatError('not a zip archive (no end of central directory record)');
}

/**
 * The files of a zip archive by name, in the order of its central directory. Directories
 * (names ending in `/`) are left out. Throws `ZipFormatError` on an archive it cannot read
 * whole: a truncated file, a wrong checksum, an unknown compression method, a duplicate name.
 */
export function readZip(zip: Buffer): Map<string, Buffer> {
  if (zip.length < 22) throw new ZipFormatError('not a zip archive (too short)');
  const end = endOfCentralDirectory(zip);
  const count = zip.readUInt16LE(end + 10);
  const size = zip.readUInt32LE(end + 12);
  let at = zip.readUInt32LE(end + 16);
  if (count === 0xffff || size === 0xffffffff || at === 0xffffffff) throw new ZipFormatError('zip64 is not supported');
  if (at + size > end) throw new ZipFormatError('the central directory lies outside the archive');
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (at + 46 > end || zip.readUInt32LE(at) !== CENTRAL_FILE_HEADER)
      throw new ZipFormatError(`central directory entry ${i + 1} of ${count} is damaged`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const compressedSize = zip.readUInt32LE(at + 20);
    const uncompressedSize = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/')) continue;
    if (flags & 1) throw new ZipFormatError(`${name} is encrypted`);
    if (files.has(name)) throw new ZipFormatError(`${name} is in the archive twice`);
    if (localOffset + 30 > zip.length || zip.readUInt32LE(localOffset) !== LOCAL_FILE_HEADER)
      throw new ZipFormatError(`${name}: its local header is missing`);
    const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    if (start + compressedSize > zip.length) throw new ZipFormatError(`${name} is truncated`);
    const stored = zip.subarray(start, start + compressedSize);
    let data: Buffer;
    if (method === 0) data = Buffer.from(stored);
    else if (method === 8) {
      try {
        data = inflateRawSync(stored);
      } catch (error) {
        throw new ZipFormatError(`${name} does not inflate: ${(error as Error).message}`);
      }
    } else throw new ZipFormatError(`${name} uses compression method ${method} (only stored and deflate are read)`);
    if (data.length !== uncompressedSize)
      throw new ZipFormatError(`${name} is ${data.length} bytes, its directory entry says ${uncompressedSize}`);
    if (crc32(data) >>> 0 !== crc) throw new ZipFormatError(`${name} fails its CRC-32 check`);
    files.set(name, data);
  }
  return files;
}
