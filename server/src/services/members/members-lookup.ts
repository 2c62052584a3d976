import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalid, notFound } from '../platform/errors.js';
import { isUuid, requireBrand } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

/**
 * Finds one member of the brand by e-mail (case-insensitive) and/or identifier. Neither is a
 * 422; both must name the same member, otherwise 404.
 */
export async function searchMember(
  db: Db,
  scope: OrganizationScope,
  input: { brand_id: string; email?: string; user_identifier?: string },
): Promise<Schemas['MemberSearchResponse']> {
  const email = input.email || undefined;
  const identifier = input.user_identifier || undefined;
  if (!email && !identifier) {
    throw invalid({
      email: ['The email field is required when user_identifier is not present.'],
      user_identifier: ['The user_identifier field is required when email is not present.'],
    });
  }
  const brand = await requireBrand(db, scope, input.brand_id);
  if (identifier && !isUuid(identifier)) throw notFound('Member');
  const [row] = await db<
    { id: string; email: string; full_name: string | null; coupons: string[]; storecards: string[] }[]
  >`
    SELECT m.id, m.email, nullif(concat_ws(' ', nullif(m.first_name, ''), nullif(m.last_name, '')), '') AS full_name,
           coalesce(array(SELECT p.pass_code FROM passes p WHERE p.member_id = m.id AND p.brand_id = bm.brand_id AND p.kind = 'coupon'
                          ORDER BY p.created_at, p.id), '{}') AS coupons,
           coalesce(array(SELECT p.pass_code FROM passes p WHERE p.member_id = m.id AND p.brand_id = bm.brand_id AND p.kind = 'storecard'
                          ORDER BY p.created_at, p.id), '{}') AS storecards
    FROM brand_members bm JOIN members m ON m.id = bm.member_id
    WHERE bm.brand_id = ${brand.id} AND m.organization_id = ${brand.organizationId}
      ${email ? db`AND lower(m.email) = lower(${email})` : db``}
      ${identifier ? db`AND m.id = ${identifier}` : db``}`;
  if (!row) throw notFound('Member');
  return {
    success: true,
    email: row.email,
    member_id: row.id,
    identifier: row.id,
    member_full_name: row.full_name,
    pass_codes: row.coupons,
    storecards: row.storecards,
  };
}

/** E-mail → member UUID for the members of the brand; unknown e-mails are left out. Keys as sent. */
export async function findMemberUuids(
  db: Db,
  scope: OrganizationScope,
  input: Schemas['FindMemberUuidsRequest'],
): Promise<Schemas['EmailToMemberId']> {
  const brand = await requireBrand(db, scope, input.brand_id);
  const rows = await db<{ email: string; id: string }[]>`
    SELECT e.email, m.id
    FROM unnest(${input.emails}::text[]) AS e(email)
    JOIN members m ON m.organization_id = ${brand.organizationId} AND lower(m.email) = lower(e.email)
    JOIN brand_members bm ON bm.brand_id = ${brand.id} AND bm.member_id = m.id`;
  // fromEntries defines own properties, so an e-mail like "__proto__" stays a plain key.
  return Object.fromEntries(rows.map((row) => [row.email, row.id]));
}
