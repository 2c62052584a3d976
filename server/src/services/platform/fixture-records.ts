import type { Tx } from '../../db/pool.js';
import { PROFILE_FIELDS, type ProfileInput } from '../members/members.js';

/**
 * An organization's records in a fixture file: what the API makes (tags, members, passes, voucher
 * jobs), so a fresh server shows data on its first call. Each is written as the API's request
 * body would be, plus its fixed `id`.
 */
export type FixtureRecords = {
  tags?: { id: string; brand_id: string; tag: string; external_reference: string; member_ids?: string[] }[];
  members?: ({
    id: string;
    brand_id: string;
    email: string;
    unsubscribed?: boolean;
    subscribed_at?: string;
  } & ProfileInput)[];
  passes?: {
    id: string;
    brand_id: string;
    member_id: string;
    coupon_id?: string;
    storecard_id?: string;
    pass_code: string;
    expiration_date?: string | null;
    start_date?: string;
    points?: number;
  }[];
  voucher_jobs?: {
    id: string;
    brand_id: string;
    tag_id: string;
    coupon_id?: string;
    storecard_id?: string;
    expiration_date?: string;
    pass_ids: string[];
    skipped?: number;
    started_at: string;
    finished_at: string;
  }[];
};

const RECORD_KEYS = ['tags', 'members', 'passes', 'voucher_jobs'] as const;

/** The organization without its records: its catalogue only. */
export function withoutRecordsOf<T extends FixtureRecords>(organization: T): T {
  const copy = { ...organization };
  for (const key of RECORD_KEYS) delete copy[key];
  return copy;
}

/** Exactly one of coupon_id and storecard_id, or an error naming the record. */
function voucherOf(what: string, r: { id: string; coupon_id?: string; storecard_id?: string }) {
  if ((r.coupon_id === undefined) === (r.storecard_id === undefined))
    throw new Error(`Fixture ${what} ${r.id} needs exactly one of coupon_id and storecard_id.`);
  return r.coupon_id !== undefined
    ? { kind: 'coupon' as const, id: r.coupon_id }
    : { kind: 'storecard' as const, id: r.storecard_id as string };
}

/**
 * Creates the records of one organization that are missing; never changes or deletes one. A row
 * whose id, e-mail, external reference or pass code is taken already stays as it is (changed or
 * made through the API), and so does everything else in the file that names it. Each row is
 * written only where what it names is there, in this organization: a link where the member and
 * brand are, a pass where its member belongs to the brand and the voucher is the brand's. No
 * events are recorded (as for the catalogue).
 */
export async function loadRecords(tx: Tx, organizationId: string, records: FixtureRecords): Promise<void> {
  const org = organizationId;
  for (const m of records.members ?? []) {
    const profile = Object.fromEntries(PROFILE_FIELDS.map((f) => [f, m[f] ?? null]));
    await tx`INSERT INTO members ${tx({ id: m.id, organization_id: org, email: m.email, ...profile })}
             ON CONFLICT DO NOTHING`;
    await tx`INSERT INTO brand_members (brand_id, member_id, unsubscribed, subscribed_at)
             SELECT b.id, m.id, ${m.unsubscribed ?? false}, coalesce(${m.subscribed_at ?? null}::timestamptz, now())
             FROM members m JOIN brands b ON b.id = ${m.brand_id} AND b.organization_id = ${org}
             WHERE m.id = ${m.id} AND m.organization_id = ${org}
             ON CONFLICT DO NOTHING`;
  }
  for (const t of records.tags ?? []) {
    await tx`INSERT INTO tags (id, organization_id, brand_id, tag, external_reference)
             SELECT ${t.id}, ${org}, b.id, ${t.tag}, ${t.external_reference} FROM brands b
             WHERE b.id = ${t.brand_id} AND b.organization_id = ${org}
             ON CONFLICT DO NOTHING`;
    await tx`INSERT INTO tag_members (tag_id, member_id)
             SELECT t.id, bm.member_id FROM tags t JOIN brand_members bm ON bm.brand_id = t.brand_id
             WHERE t.id = ${t.id} AND t.organization_id = ${org} AND bm.member_id = ANY(${t.member_ids ?? []}::uuid[])
             ON CONFLICT DO NOTHING`;
  }
  for (const p of records.passes ?? []) {
    const voucher = voucherOf('pass', p);
    const table = voucher.kind === 'coupon' ? tx`coupons` : tx`storecards`;
    await tx`INSERT INTO passes (id, organization_id, brand_id, member_id, kind, coupon_id, storecard_id, pass_code,
                                 qr_code, expiration_date, start_date, points)
             SELECT ${p.id}, ${org}, bm.brand_id, bm.member_id, ${voucher.kind},
                    ${voucher.kind === 'coupon' ? voucher.id : null}, ${voucher.kind === 'storecard' ? voucher.id : null},
                    ${p.pass_code}, ${p.pass_code}, ${p.expiration_date ?? null}::date,
                    coalesce(${p.start_date ?? null}::date, (loyalty_now(${org}::text) AT TIME ZONE 'UTC')::date),
                    ${p.points ?? 0}
             FROM brand_members bm JOIN brands b ON b.id = bm.brand_id AND b.organization_id = ${org}
             JOIN ${table} v ON v.id = ${voucher.id} AND v.brand_id = b.id
             WHERE bm.brand_id = ${p.brand_id} AND bm.member_id = ${p.member_id}
             ON CONFLICT DO NOTHING`;
  }
  for (const j of records.voucher_jobs ?? []) await loadFinishedJob(tx, org, j);
}

/**
 * A finished voucher job (status `done`): it issued the passes `pass_ids` names (its grants, so a
 * new job of the same tag and voucher skips their members) and skipped `skipped` members.
 */
async function loadFinishedJob(tx: Tx, org: string, j: NonNullable<FixtureRecords['voucher_jobs']>[number]) {
  const voucher = voucherOf('voucher job', j);
  const mode = j.expiration_date === undefined ? 'default' : j.expiration_date === 'no-date' ? 'none' : 'date';
  const issued = j.pass_ids.length;
  const total = issued + (j.skipped ?? 0);
  const inserted = await tx`
    INSERT INTO voucher_jobs (id, organization_id, brand_id, tag_id, voucher_kind, voucher_id, expiration_mode,
                              expiration_date, status, total, processed, issued, skipped, failed, started_at, finished_at)
    SELECT ${j.id}, ${org}, t.brand_id, t.id, ${voucher.kind}, ${voucher.id}, ${mode},
           ${mode === 'date' ? (j.expiration_date ?? null) : null}::date, 'done', ${total}, ${total}, ${issued},
           ${j.skipped ?? 0}, 0, ${j.started_at}, ${j.finished_at}
    FROM tags t WHERE t.id = ${j.tag_id} AND t.brand_id = ${j.brand_id} AND t.organization_id = ${org}
    ON CONFLICT DO NOTHING
    RETURNING id`;
  if (!inserted.length) return;
  await tx`INSERT INTO voucher_grants (tag_id, voucher_kind, voucher_id, member_id, job_id, status, pass_id)
           SELECT ${j.tag_id}, ${voucher.kind}, ${voucher.id}, p.member_id, ${j.id}, 'issued', p.id
           FROM passes p WHERE p.id = ANY(${j.pass_ids}::uuid[]) AND p.organization_id = ${org}
             AND p.kind = ${voucher.kind} AND coalesce(p.coupon_id, p.storecard_id) = ${voucher.id}
           ON CONFLICT DO NOTHING`;
}
