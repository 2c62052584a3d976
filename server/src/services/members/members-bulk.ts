import type { Db } from '../../db/pool.js';
import { invalid } from '../platform/errors.js';
import { isUuid, requireBrand } from '../platform/members-scope.js';
import { checkProfile, PROFILE_FIELDS, type ProfileInput } from './members.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

export type BulkMemberUpdate = ProfileInput & { identifier: string };

/**
 * PUT /bulk/members: every item is validated first (422 names `members.N.field`), then all are
 * applied in one statement with the single update's rules (only sent fields change, null clears).
 * Identifiers that are not members of the brand are reported in `not_found`; an identifier sent
 * twice gets both items merged in order (a later field wins).
 */
export async function bulkUpdateMembers(
  tx: Db,
  scope: OrganizationScope,
  input: { brand_id: string; members: BulkMemberUpdate[] },
): Promise<{ updated: number; not_found: string[] }> {
  const errors: Record<string, string[]> = {};
  for (const [i, m] of input.members.entries()) Object.assign(errors, checkProfile(m, `members.${i}.`));
  if (Object.keys(errors).length) throw invalid(errors);
  const brand = await requireBrand(tx, scope, input.brand_id);

  const merged = new Map<string, Record<string, string | null>>();
  const notFound: string[] = [];
  for (const item of input.members) {
    const id = item.identifier.toLowerCase();
    if (!isUuid(id)) {
      if (!notFound.includes(item.identifier)) notFound.push(item.identifier);
      continue;
    }
    const fields = Object.fromEntries(
      PROFILE_FIELDS.filter((f) => item[f] !== undefined).map((f) => [f, item[f] ?? null]),
    );
    merged.set(id, { ...merged.get(id), ...fields });
  }
  const items = [...merged].map(([identifier, fields]) => ({ identifier, fields }));
  // `fields ? 'x'` tells "sent as null" (clear) from "not sent" (keep).
  const set = PROFILE_FIELDS.map((f) => {
    const value = f === 'birth_day' ? tx`(u.fields->>${f})::date` : tx`u.fields->>${f}`;
    return tx`${tx(f)} = CASE WHEN u.fields ? ${f} THEN ${value} ELSE m.${tx(f)} END`;
  });
  // Rows locked in id order first, so two bulk updates over the same members wait instead of deadlocking.
  if (items.length)
    await tx`SELECT id FROM members WHERE id = ANY(${items.map((i) => i.identifier)}::uuid[]) ORDER BY id FOR UPDATE`;
  const updated = items.length
    ? await tx<{ id: string }[]>`
        UPDATE members m SET ${set.reduce((acc, part) => tx`${acc}, ${part}`)}, updated_at = now()
        FROM jsonb_to_recordset(${tx.json(items as never)}) AS u(identifier uuid, fields jsonb)
        WHERE m.id = u.identifier AND m.organization_id = ${brand.organizationId}
          AND EXISTS (SELECT 1 FROM brand_members bm WHERE bm.brand_id = ${brand.id} AND bm.member_id = m.id)
        RETURNING m.id`
    : [];
  const done = new Set(updated.map((r) => r.id));
  for (const { identifier } of items) if (!done.has(identifier)) notFound.push(identifier);
  return { updated: done.size, not_found: notFound };
}
