// The floor of the voucher benches (issue 30): what PostgreSQL does with the rows one voucher job
// writes, by COPY, with no server, no worker and no query in the way. For every member of the tag:
// a coupon pass (UUIDv7 id and a pass code, as the round makes them), its grant, its
// `coupon.issued` event (UUIDv7 id, the round's payload) and, for each subscription given, its
// webhook delivery (due now). The rows go into the real tables with every index, constraint and
// trigger they have. Everything is made and formatted in this process first (member ids read,
// ids and codes generated, COPY text built); only the COPYs and their commit are timed.
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { uuidv7 } from './copy-anchor.mjs';
import { serverModule } from './server-dist.mjs';

const { newPassCodes } = await serverModule('lib/pass-codes.js');

/** One field of COPY's text format (NULL as \N; backslash, tab, newline, carriage return escaped). */
const field = (value) =>
  value == null
    ? '\\N'
    : String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]);
const copyText = (rows) => rows.map((r) => `${r.map(field).join('\t')}\n`).join('');

/** The organization's today (UTC date) plus `days`, as the round's `couponExpiration` makes it. */
const dateIn = (today, days) =>
  new Date(Date.parse(`${today}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * COPYs the rows of a voucher job of `couponId` (valid `validDays` days) over every member of
 * `tagId` in one transaction, with a delivery per event for each of `subscriptionIds`. Answers
 * the seconds from the first COPY to the commit and the rows written per table.
 * @param {import('postgres').Sql} sql
 * @param {{ organizationId: string, brandId: string, tagId: string, couponId: string, validDays: number,
 *   subscriptionIds?: string[] }} o
 */
export async function copyVoucherRows(sql, o) {
  const { organizationId: org, brandId: brand, tagId: tag, couponId, validDays } = o;
  const subscriptionIds = o.subscriptionIds ?? [];
  // Untimed: the members, a job row for the grants to name, today, and every row's text.
  const memberIds = (await sql`SELECT member_id FROM tag_members WHERE tag_id = ${tag} ORDER BY member_id`).map(
    (r) => r.member_id,
  );
  const [job] = await sql`
    INSERT INTO voucher_jobs (organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode, lanes, status)
    VALUES (${org}, ${brand}, ${tag}, 'coupon', ${couponId}, 'default', 1, 'done') RETURNING id`;
  const [{ today }] = await sql`SELECT (loyalty_now(${org}) AT TIME ZONE 'UTC')::date::text AS today`;
  const expires = dateIn(today, validDays);
  const codes = newPassCodes(memberIds.length);
  const passIds = memberIds.map(() => uuidv7());
  const eventIds = memberIds.map(() => uuidv7());
  const now = new Date().toISOString();
  const tables = [
    {
      table: 'passes',
      columns: [
        'id',
        'organization_id',
        'brand_id',
        'member_id',
        'kind',
        'coupon_id',
        'pass_code',
        'qr_code',
        'expiration_date',
        'start_date',
      ],
      text: copyText(
        memberIds.map((m, i) => [passIds[i], org, brand, m, 'coupon', couponId, codes[i], codes[i], expires, today]),
      ),
    },
    {
      table: 'voucher_grants',
      columns: ['tag_id', 'voucher_kind', 'voucher_id', 'member_id', 'job_id', 'status', 'pass_id'],
      text: copyText(memberIds.map((m, i) => [tag, 'coupon', couponId, m, job.id, 'issued', passIds[i]])),
    },
    {
      table: 'events',
      columns: ['id', 'organization_id', 'type', 'data'],
      text: copyText(
        memberIds.map((m, i) => [
          eventIds[i],
          org,
          'coupon.issued',
          JSON.stringify({
            coupon_id: couponId,
            pass_id: passIds[i],
            member_id: m,
            brand_id: brand,
            expires_at: expires,
          }),
        ]),
      ),
    },
    ...subscriptionIds.map((s) => ({
      table: 'webhook_deliveries',
      columns: ['subscription_id', 'event_id', 'event_type', 'next_attempt_at'],
      text: copyText(eventIds.map((e) => [s, e, 'coupon.issued', now])),
    })),
  ];

  const started = performance.now();
  await sql.begin(async (tx) => {
    for (const { table, columns, text } of tables) {
      const writable = await tx`COPY ${tx(table)} (${tx(columns)}) FROM STDIN`.writable();
      await pipeline(Readable.from([text]), writable);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  return { seconds, members: memberIds.length, deliveries: memberIds.length * subscriptionIds.length };
}
