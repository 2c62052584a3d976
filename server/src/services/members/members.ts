import type { Db } from '../../db/pool.js';
import { isCalendarDate } from '../../lib/dates.js';
import type { Schemas } from '../../lib/schemas.js';
import { walletUrl } from '../../lib/pass-codes.js';
import { invalid, notFound } from '../platform/errors.js';
import { recordEvents } from '../webhooks/events.js';
import { requireBrand, requireBrandMember, isUuid, type Brand } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

/** Profile fields a member create or update may set (the e-mail only on create). */
export const PROFILE_FIELDS = [
  'first_name',
  'last_name',
  'phone_number',
  'birth_day',
  'street',
  'house_number',
  'postcode',
  'city',
  'country',
] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
export type ProfileInput = Schemas['MemberProfileFields'];

export type CreateMemberInput = ProfileInput & { brand_id: string; email: string; unsubscribed?: boolean };

/**
 * Semantic checks beside the document's schema: names of at most 191 characters (the column
 * width) and birth days that are real calendar dates (a pattern cannot reject `2026-02-30`).
 */
export function checkProfile(input: ProfileInput, prefix = ''): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const field of ['first_name', 'last_name'] as const) {
    const value = input[field];
    if (typeof value === 'string' && value.length > 191 && [...value].length > 191)
      errors[`${prefix}${field}`] = [`The ${prefix}${field} field must not be greater than 191 characters.`];
  }
  if (typeof input.birth_day === 'string' && !isCalendarDate(input.birth_day)) {
    errors[`${prefix}birth_day`] = [`The ${prefix}birth_day field must be a valid date in the format Y-m-d.`];
  }
  return errors;
}

/**
 * Creates a member, idempotent on the e-mail address (case-insensitive, per organization): an
 * existing member is returned untouched (`created: false`) and linked to the brand when it was
 * not. `member.created` is recorded whenever the member joins the brand (new member or new link).
 */
export async function createMember(
  tx: Db,
  scope: OrganizationScope,
  input: CreateMemberInput,
): Promise<{ created: boolean; memberId: string }> {
  const brand = await requireBrand(tx, scope, input.brand_id);
  const fieldErrors = checkProfile(input);
  if (Object.keys(fieldErrors).length) throw invalid(fieldErrors);
  const row = {
    organization_id: brand.organizationId,
    email: input.email,
    ...Object.fromEntries(PROFILE_FIELDS.map((f) => [f, input[f] ?? null])),
  };
  // The known member is locked FOR KEY SHARE before it is linked (the lock a foreign key would
  // take; see migration 0031). A member deleted between the insert and the lock is gone: insert again.
  for (let attempt = 1; ; attempt++) {
    const [inserted] = await tx<{ id: string }[]>`
      INSERT INTO members ${tx(row)}
      ON CONFLICT (organization_id, lower(email)) DO NOTHING
      RETURNING id`;
    const memberId =
      inserted?.id ??
      (
        await tx<{ id: string }[]>`
      SELECT id FROM members WHERE organization_id = ${brand.organizationId} AND lower(email) = lower(${input.email})
      FOR KEY SHARE`
      )[0]?.id;
    if (memberId === undefined) {
      if (attempt < 3) continue;
      throw new Error(`member ${input.email} kept being deleted while it was created`);
    }
    await linkToBrand(tx, brand, memberId, { unsubscribed: input.unsubscribed ?? false });
    return { created: Boolean(inserted), memberId };
  }
}

/** Links a member to a brand unless linked already; a new link records `member.created`. */
export async function linkToBrand(
  tx: Db,
  brand: Brand,
  memberId: string,
  options: { unsubscribed: boolean },
): Promise<boolean> {
  const linked = await tx`
    INSERT INTO brand_members (brand_id, member_id, unsubscribed) VALUES (${brand.id}, ${memberId}, ${options.unsubscribed})
    ON CONFLICT DO NOTHING RETURNING member_id`;
  if (!linked.length) return false;
  await recordEvents(tx, [
    { organizationId: brand.organizationId, type: 'member.created', data: { member_id: memberId, brand_id: brand.id } },
  ]);
  return true;
}

/** The profile as one row; the passes' `status` is what `loyalty_pass_status()` answers. */
type ProfileRow = Omit<Schemas['MemberProfile'], 'full_name'> & {
  id: string;
  unsubscribed: boolean;
  subscribed_at: string;
  passes: (Omit<Schemas['PassSummary'], 'wallet_url'> & { kind: 'coupon' | 'storecard' })[];
};

/** The member profile response, in one query (member get is the hot path of integrations). */
export async function getMember(
  db: Db,
  scope: OrganizationScope,
  memberId: string,
  brandId: string,
  baseUrl: string,
): Promise<Schemas['MemberResponse']> {
  const [row] = isUuid(memberId)
    ? await db<ProfileRow[]>`
        SELECT m.id, m.email, m.first_name, m.last_name, m.phone_number, m.birth_day::text AS birth_day, m.street,
               m.house_number, m.postcode, m.city, m.country, bm.unsubscribed,
               to_char(bm.subscribed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS subscribed_at,
               coalesce((
                 SELECT json_agg(json_build_object('kind', p.kind, 'pass_code', p.pass_code,
                          'status', loyalty_pass_status(p.status, p.expiration_date, p.organization_id), 'expiration_date', p.expiration_date)
                        ORDER BY p.created_at DESC, p.id DESC)
                 FROM passes p WHERE p.member_id = m.id AND p.brand_id = bm.brand_id), '[]') AS passes
        FROM brands b
        JOIN brand_members bm ON bm.brand_id = b.id AND bm.member_id = ${memberId}
        JOIN members m ON m.id = bm.member_id
        WHERE b.id = ${brandId} AND b.organization_id = ANY(${scope.organizationIds})`
    : [];
  if (!row) {
    await requireBrand(db, scope, brandId); // the right message: brand or member
    throw notFound('Member');
  }
  const summary = (p: ProfileRow['passes'][number]): Schemas['PassSummary'] => ({
    pass_code: p.pass_code,
    status: p.status,
    expiration_date: p.expiration_date,
    wallet_url: walletUrl(baseUrl, p.pass_code),
  });
  const fullName = [row.first_name, row.last_name].filter((n) => n).join(' ') || null;
  return {
    success: true,
    member_id: row.id,
    identifier: row.id,
    brand_id: brandId,
    unsubscribed: row.unsubscribed,
    subscribed_at: row.subscribed_at,
    profile: {
      email: row.email,
      first_name: row.first_name,
      last_name: row.last_name,
      full_name: fullName,
      phone_number: row.phone_number,
      birth_day: row.birth_day,
      street: row.street,
      house_number: row.house_number,
      postcode: row.postcode,
      city: row.city,
      country: row.country,
    },
    storecards: row.passes.filter((p) => p.kind === 'storecard').map(summary),
    coupons: row.passes.filter((p) => p.kind === 'coupon').map(summary),
  };
}

/**
 * Partial update: only the fields present change, `null` clears one. The e-mail address cannot
 * change; an `email` field in the body is ignored (openapi.yaml).
 */
export async function updateMember(
  tx: Db,
  scope: OrganizationScope,
  memberId: string,
  input: ProfileInput & { brand_id: string },
  baseUrl: string,
): Promise<Schemas['MemberResponse']> {
  const brand = await requireBrand(tx, scope, input.brand_id);
  await requireBrandMember(tx, brand, memberId);
  const fieldErrors = checkProfile(input);
  if (Object.keys(fieldErrors).length) throw invalid(fieldErrors);
  const changes = Object.fromEntries(PROFILE_FIELDS.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
  if (Object.keys(changes).length) {
    await tx`UPDATE members SET ${tx(changes, Object.keys(changes))}, updated_at = now() WHERE id = ${memberId}`;
  }
  return getMember(tx, scope, memberId, brand.id, baseUrl);
}

/**
 * Removes the member from the brand with everything that ties it to the brand: the brand link
 * (subscription state, favourite location), the member's passes of the brand (with their tag
 * links and storecard transactions), its memberships of the brand's tags and the voucher grants
 * of those tags. The member row goes too when no brand is left. Irreversible.
 */
export async function deleteMemberFromBrand(
  tx: Db,
  scope: OrganizationScope,
  memberId: string,
  brandId: string,
): Promise<void> {
  const brand = await requireBrand(tx, scope, brandId);
  // The member row first, FOR UPDATE: it waits for any transaction linking the member to another
  // brand (they hold FOR KEY SHARE), so the last statement below sees their links. This lock
  // stands in for the foreign key brand_members → members (migration 0031).
  if (isUuid(memberId))
    await tx`SELECT 1 FROM members WHERE id = ${memberId} AND organization_id = ${brand.organizationId} FOR UPDATE`;
  await requireBrandMember(tx, brand, memberId, { lock: true });
  await tx`DELETE FROM tag_members tm USING tags t WHERE tm.tag_id = t.id AND t.brand_id = ${brand.id} AND tm.member_id = ${memberId}`;
  // Voucher grants record what the brand's tags gave the member; with the passes gone, a member
  // who joins again must be able to receive those vouchers again.
  await tx`DELETE FROM voucher_grants g USING tags t WHERE g.tag_id = t.id AND t.brand_id = ${brand.id} AND g.member_id = ${memberId}`;
  await tx`DELETE FROM passes WHERE member_id = ${memberId} AND brand_id = ${brand.id}`;
  await tx`DELETE FROM brand_members WHERE brand_id = ${brand.id} AND member_id = ${memberId}`;
  await tx`DELETE FROM members m WHERE m.id = ${memberId} AND NOT EXISTS (SELECT 1 FROM brand_members WHERE member_id = m.id)`;
}
