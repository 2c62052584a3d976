// Anchors for the members bench (issue 17): what PostgreSQL does with the same rows by COPY, with
// no server in the way. Measured in the same run as the server's figures, alternating with them.
import { randomFillSync } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';

const random = Buffer.alloc(10);
/** A UUIDv7 (48-bit Unix milliseconds, version 7, RFC variant), as the server's uuidv7() default makes. */
export function uuidv7() {
  const b = Buffer.alloc(16);
  b.writeUIntBE(Date.now(), 0, 6);
  randomFillSync(random);
  random.copy(b, 6);
  b[6] = 0x70 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** One field of COPY's text format (NULL as \N; backslash, tab, newline, carriage return escaped). */
const field = (value) =>
  value == null
    ? '\\N'
    : String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]);

/** COPY `rows` (arrays of values) into `table (columns)` on `db` (a transaction or a reserved connection). */
export async function copyInto(db, table, columns, rows) {
  const text = rows.map((r) => `${r.map(field).join('\t')}\n`).join('');
  const writable = await db`COPY ${db(table)} (${db(columns)}) FROM STDIN`.writable();
  await pipeline(Readable.from([text]), writable);
}

/**
 * The rows one sign-up import of `users` writes, by COPY in one transaction: the members (ids
 * made here, UUIDv7 as the server's), their links to `brandId`, and one member.created event each.
 * Answers the milliseconds from the first byte formatted to the commit.
 */
export async function copySignups(sql, { organizationId, brandId, users }) {
  const started = performance.now();
  await sql.begin(async (tx) => {
    const ids = users.map(() => uuidv7());
    await copyInto(
      tx,
      'members',
      ['id', 'organization_id', 'email', 'first_name', 'last_name'],
      users.map((u, i) => [ids[i], organizationId, u.email, u.first_name, u.last_name]),
    );
    await copyInto(
      tx,
      'brand_members',
      ['brand_id', 'member_id', 'unsubscribed', 'subscribed_at'],
      users.map((u, i) => [brandId, ids[i], u.unsubscribed ? 't' : 'f', u.subscribed_at ?? new Date().toISOString()]),
    );
    await copyInto(
      tx,
      'events',
      ['organization_id', 'type', 'data'],
      ids.map((id) => [organizationId, 'member.created', JSON.stringify({ member_id: id, brand_id: brandId })]),
    );
  });
  return performance.now() - started;
}

/**
 * `COPY (select) TO STDOUT` read to its end on a connection of its own (opened before the clock
 * starts). Answers the milliseconds to the last byte, the bytes and the rows (lines) read.
 */
export async function copyOut(sql, select) {
  const conn = await sql.reserve();
  try {
    await conn`SELECT 1`;
    const started = performance.now();
    const stream = await conn`COPY (${select}) TO STDOUT`.readable();
    let bytes = 0;
    let rows = 0;
    for await (const chunk of stream) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
    }
    return { ms: performance.now() - started, bytes, rows };
  } finally {
    conn.release();
  }
}
