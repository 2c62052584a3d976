import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { buildPaginator, type Paginator } from '../../lib/paginator.js';
import { notFound } from '../platform/errors.js';
import { isUuid, requireBrand, requireBrandMember } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { readPaging, type Paging } from '../platform/paging.js';

/** Page size of member coupons/storecards (10 by default, at most 100: openapi.yaml, docs/decisions.md). */
export const PASSES_PER_PAGE_DEFAULT = 10;
export const PASSES_PER_PAGE_MAX = 100;

type CouponPassItem = Schemas['CouponPass'];
type StorecardPassItem = Schemas['StorecardPass'];

type PageInput = { brand_id: string; page?: number | string; per_page?: number | string };

function readPage(input: PageInput): Paging {
  return readPaging(input, { fallback: PASSES_PER_PAGE_DEFAULT, max: PASSES_PER_PAGE_MAX }, (value) =>
    value == null || value === '' ? undefined : Number(value),
  );
}

/** GET /members/{uuid}/coupons and /storecards: the member's passes of the brand, newest first. */
export async function listMemberPasses(
  db: Db,
  scope: OrganizationScope,
  memberId: string,
  kind: 'coupon',
  input: PageInput,
  path: string,
): Promise<Paginator<CouponPassItem>>;
export async function listMemberPasses(
  db: Db,
  scope: OrganizationScope,
  memberId: string,
  kind: 'storecard',
  input: PageInput,
  path: string,
): Promise<Paginator<StorecardPassItem>>;
export async function listMemberPasses(
  db: Db,
  scope: OrganizationScope,
  memberId: string,
  kind: 'coupon' | 'storecard',
  input: PageInput,
  path: string,
): Promise<Paginator<CouponPassItem | StorecardPassItem>> {
  const { page, perPage } = readPage(input);
  const brand = await requireBrand(db, scope, input.brand_id);
  await requireBrandMember(db, brand, memberId);
  const counted = firstRow(
    await db<{ total: number }[]>`
    SELECT count(*)::int AS total FROM passes WHERE member_id = ${memberId} AND brand_id = ${brand.id} AND kind = ${kind}`,
    'the count of passes',
  );
  const common = db`
    to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
    to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
    p.expiration_date::text AS expiration_date, p.start_date::text AS start_date,
    p.pass_code AS qr_code, p.id AS loyalty_code`;
  const rows =
    kind === 'coupon'
      ? await db<CouponPassItem[]>`
        SELECT ${common}, c.title AS coupon_title, c.thumbnail_url AS coupon_thumbnail_url,
               c.external_reference AS coupon_external_reference, loyalty_pass_status(p.status, p.expiration_date, p.organization_id) AS status
        FROM passes p JOIN coupons c ON c.id = p.coupon_id
        WHERE p.member_id = ${memberId} AND p.brand_id = ${brand.id} AND p.kind = 'coupon'
        ORDER BY p.created_at DESC, p.id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`
      : await db<StorecardPassItem[]>`
        SELECT ${common}, p.points, p.balance, s.title AS storecard_title, s.thumbnail_url AS storecard_thumbnail_url,
               loyalty_pass_status(p.status, p.expiration_date, p.organization_id) AS status
        FROM passes p JOIN storecards s ON s.id = p.storecard_id
        WHERE p.member_id = ${memberId} AND p.brand_id = ${brand.id} AND p.kind = 'storecard'
        ORDER BY p.created_at DESC, p.id DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
  return buildPaginator<CouponPassItem | StorecardPassItem>({
    data: [...rows],
    total: counted.total,
    page,
    perPage,
    path,
    // Page URLs carry what it takes to follow them: the brand, and a page size other than the default.
    query: { brand_id: brand.id, ...(perPage !== PASSES_PER_PAGE_DEFAULT ? { per_page: perPage } : {}) },
  });
}

/**
 * POST /members/location: sets the favourite location on every brand link of the given members,
 * in each of the token's organizations that has a location with this id (location ids are per
 * organization). Members that are unknown or of another organization are left out of the answer;
 * a location id that none of the token's organizations has is a 404.
 */
export async function setFavouriteLocation(
  tx: Db,
  scope: OrganizationScope,
  input: Schemas['FavoriteLocationRequest'],
): Promise<string[]> {
  const [location] = await tx`
    SELECT 1 FROM locations WHERE id = ${input.location_id} AND organization_id = ANY(${scope.organizationIds}) LIMIT 1`;
  if (!location) throw notFound('Location');
  const ids = [...new Set(input.users.filter(isUuid).map((u) => u.toLowerCase()))];
  // Links locked in one order first, so two calls over the same members wait instead of deadlocking.
  await tx`
    SELECT 1 FROM brand_members bm JOIN brands b ON b.id = bm.brand_id
    WHERE b.organization_id = ANY(${scope.organizationIds}) AND bm.member_id = ANY(${ids}::uuid[])
    ORDER BY bm.brand_id, bm.member_id FOR UPDATE OF bm`;
  const rows = await tx<{ member_id: string }[]>`
    UPDATE brand_members bm SET favourite_location_id = l.id
    FROM brands b JOIN locations l ON l.organization_id = b.organization_id AND l.id = ${input.location_id}
    WHERE b.id = bm.brand_id AND b.organization_id = ANY(${scope.organizationIds}) AND bm.member_id = ANY(${ids}::uuid[])
    RETURNING bm.member_id`;
  const updated = new Set(rows.map((r) => r.member_id));
  return ids.filter((id) => updated.has(id));
}
