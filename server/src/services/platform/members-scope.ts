import type { Db } from '../../db/pool.js';
import { notFound } from './errors.js';
import type { OrganizationScope } from './organization-scope.js';

export type Brand = { id: string; organizationId: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

/** The brand, when it belongs to an organization of the token; else 404 as for an unknown id. */
export async function requireBrand(db: Db, scope: OrganizationScope, brandId: string): Promise<Brand> {
  const [row] = await db<{ id: string; organization_id: string }[]>`
    SELECT id, organization_id FROM brands WHERE id = ${brandId} AND organization_id = ANY(${scope.organizationIds})`;
  if (!row) throw notFound('Brand');
  return { id: row.id, organizationId: row.organization_id };
}

/** The member's id when the member is linked to the brand; else 404. */
export async function requireBrandMember(
  db: Db,
  brand: Brand,
  memberId: string,
  { lock = false } = {},
): Promise<string> {
  if (!isUuid(memberId)) throw notFound('Member');
  const [row] = lock
    ? await db<{ member_id: string }[]>`
        SELECT member_id FROM brand_members WHERE brand_id = ${brand.id} AND member_id = ${memberId} FOR UPDATE`
    : await db<{ member_id: string }[]>`
        SELECT member_id FROM brand_members WHERE brand_id = ${brand.id} AND member_id = ${memberId}`;
  if (!row) throw notFound('Member');
  return row.member_id;
}
