import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField, notFound } from '../platform/errors.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

type ApiTag = Schemas['Tag'];

export type TagRow = {
  id: string;
  brand_id: string;
  tag: string;
  external_reference: string;
  created_at: Date;
  updated_at: Date;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COLUMNS = ['id', 'brand_id', 'tag', 'external_reference', 'created_at', 'updated_at'];
const referenceTaken = () => invalidField('external_reference', 'The external reference has already been taken.');
const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

/** JSON text of a value of type T, serialized by PostgreSQL. */
export type JsonText<T> = string & { readonly __json?: T };

/**
 * The tags as a JSON array of Tag objects, oldest first. GET /tags is the hot read: each row
 * keeps its API representation (`api_json`, written by a trigger, migration 0004), so this is
 * one string_agg, and Node neither parses rows and timestamps nor serializes them again.
 * That column is the only place a Tag object is built: create and update return it too.
 */
export async function listTagsJson(db: Db, scope: OrganizationScope): Promise<JsonText<ApiTag[]>> {
  const rows = await db<{ data: string }[]>`
    SELECT '[' || coalesce(string_agg(api_json, ',' ORDER BY created_at, id), '') || ']' AS data
    FROM tags WHERE ${organizationMatch(db, scope)}`;
  return firstRow(rows, 'the aggregated tags').data;
}

/**
 * `organization_id = $1` for a token of one organization (nearly all), `= ANY($1)` otherwise.
 * A prepared statement is replanned on every execution while its generic plan looks costlier
 * than a custom one, and `= ANY($1)` with an array of unknown length always does before the
 * table is analyzed: for GET /tags that replanning was half of PostgreSQL's time per request
 * (220 against 100 µs of CPU, scratch measurement with 20 tags).
 */
const organizationMatch = (db: Db, scope: OrganizationScope) => {
  const only = scope.organizationIds.length === 1 ? scope.organizationIds[0] : undefined;
  return only !== undefined ? db`organization_id = ${only}` : db`organization_id = ANY(${scope.organizationIds})`;
};

/**
 * A tag by its uuid or its external_reference (unique per organization), within the token's
 * organizations and, when `brandId` is given, that brand. A uuid wins over an equal reference.
 */
export async function findTag(
  db: Db,
  scope: OrganizationScope,
  ref: string,
  brandId?: string | null,
  options: { uuidOnly?: boolean } = {},
): Promise<TagRow> {
  const byUuid = UUID.test(ref);
  const match = byUuid
    ? options.uuidOnly
      ? db`id = ${ref}::uuid`
      : db`(id = ${ref}::uuid OR external_reference = ${ref})`
    : options.uuidOnly
      ? db`false`
      : db`external_reference = ${ref}`;
  const [tag] = await db<TagRow[]>`
    SELECT ${db(COLUMNS)} FROM tags
    WHERE organization_id = ANY(${scope.organizationIds}) AND ${match}
      AND (${brandId ?? null}::text IS NULL OR brand_id = ${brandId ?? null})
    ${byUuid ? db`ORDER BY id = ${ref}::uuid DESC` : db``}
    LIMIT 1`;
  if (!tag) throw notFound('Tag');
  return tag;
}

/** The Tag object the trigger wrote into the row (`api_json`), parsed. */
const apiTag = (db: Db) => db`api_json::json AS api`;

export async function createTag(db: Db, scope: OrganizationScope, input: Schemas['CreateTagRequest']): Promise<ApiTag> {
  const [brand] = await db<{ organization_id: string }[]>`
    SELECT organization_id FROM brands WHERE id = ${input.brand_id} AND organization_id = ANY(${scope.organizationIds})`;
  if (!brand) throw notFound('Brand');
  const [tag] = await db<{ api: ApiTag }[]>`
    INSERT INTO tags (organization_id, brand_id, tag, external_reference)
    VALUES (${brand.organization_id}, ${input.brand_id}, ${input.tag}, ${input.external_reference})
    ON CONFLICT (organization_id, external_reference) DO NOTHING
    RETURNING ${apiTag(db)}`;
  if (!tag) throw referenceTaken();
  return tag.api;
}

/** Only the fields sent change; a tag never moves to another brand. */
export async function updateTag(db: Db, scope: OrganizationScope, input: Schemas['UpdateTagRequest']): Promise<ApiTag> {
  const current = await findTag(db, scope, input.tag_id, input.brand_id, { uuidOnly: true });
  try {
    const [tag] = await db<{ api: ApiTag }[]>`
      UPDATE tags SET tag = coalesce(${input.tag ?? null}, tag),
        external_reference = coalesce(${input.external_reference ?? null}, external_reference), updated_at = now()
      WHERE id = ${current.id}
      RETURNING ${apiTag(db)}`;
    if (!tag) throw notFound('Tag');
    return tag.api;
  } catch (error) {
    if (isUniqueViolation(error)) throw referenceTaken();
    throw error;
  }
}

/** Deletes the tag; its member and pass links go with it (ON DELETE CASCADE). */
export async function deleteTag(db: Db, scope: OrganizationScope, input: Schemas['DeleteTagRequest']): Promise<void> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id, { uuidOnly: true });
  await db`DELETE FROM tags WHERE id = ${tag.id}`;
}

type PassInput = Schemas['TagPassRequest'];

/** A pass of the tag's brand, by code; any other pass answers 404 like an unknown one. */
async function findPassId(db: Db, tag: TagRow, passCode: string): Promise<string> {
  const [pass] = await db<
    { id: string }[]
  >`SELECT id FROM passes WHERE pass_code = ${passCode} AND brand_id = ${tag.brand_id}`;
  if (!pass) throw notFound('Pass');
  return pass.id;
}

export async function addPassToTag(db: Db, scope: OrganizationScope, input: PassInput): Promise<void> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  const passId = await findPassId(db, tag, input.pass_code);
  await db`INSERT INTO tag_passes (tag_id, pass_id) VALUES (${tag.id}, ${passId}) ON CONFLICT DO NOTHING`;
}

export async function removePassFromTag(db: Db, scope: OrganizationScope, input: PassInput): Promise<void> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  const passId = await findPassId(db, tag, input.pass_code);
  await db`DELETE FROM tag_passes WHERE tag_id = ${tag.id} AND pass_id = ${passId}`;
}

export async function listTagPasses(
  db: Db,
  scope: OrganizationScope,
  input: { tag_id: string; brand_id: string },
): Promise<{ pass_code: string }[]> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  return db<{ pass_code: string }[]>`
    SELECT p.pass_code FROM tag_passes tp JOIN passes p ON p.id = tp.pass_id
    WHERE tp.tag_id = ${tag.id} ORDER BY tp.created_at, p.pass_code`;
}

type MemberInput = Schemas['TagMemberRequest'];

export async function addMemberToTag(db: Db, scope: OrganizationScope, input: MemberInput): Promise<void> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  // Only members of the tag's brand can be put on it; one already on it stays as it is.
  const [added] = await db<{ member_id: string }[]>`
    WITH member AS (SELECT member_id FROM brand_members WHERE brand_id = ${tag.brand_id} AND member_id = ${input.member_id}),
    linked AS (INSERT INTO tag_members (tag_id, member_id) SELECT ${tag.id}, member_id FROM member ON CONFLICT DO NOTHING)
    SELECT member_id FROM member`;
  if (!added) throw notFound('Member');
}

export async function removeMemberFromTag(db: Db, scope: OrganizationScope, input: MemberInput): Promise<void> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  // A member who has left the brand can still be taken off its tags: any member of the organization.
  const [member] = await db<{ id: string }[]>`
    SELECT m.id FROM members m JOIN brands b ON b.organization_id = m.organization_id
    WHERE m.id = ${input.member_id} AND b.id = ${tag.brand_id}`;
  if (!member) throw notFound('Member');
  await db`DELETE FROM tag_members WHERE tag_id = ${tag.id} AND member_id = ${member.id}`;
}

/** Members still in the tag's brand, in the order they were added. */
export async function listTagMembers(
  db: Db,
  scope: OrganizationScope,
  input: { tag_id: string; brand_id: string },
): Promise<{ identifier: string; email: string }[]> {
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  return db<{ identifier: string; email: string }[]>`
    SELECT m.id AS identifier, m.email FROM tag_members tm
    JOIN members m ON m.id = tm.member_id
    JOIN brand_members bm ON bm.member_id = tm.member_id AND bm.brand_id = ${tag.brand_id}
    WHERE tm.tag_id = ${tag.id} ORDER BY tm.created_at, m.id`;
}

/**
 * Puts up to 2000 members on a tag in one set-based statement. Members already on the tag,
 * unknown ids and people who are not members of the brand are skipped, so repeating is safe.
 * Returns how many were added.
 */
export async function addMembersToTagBulk(
  db: Db,
  scope: OrganizationScope,
  input: Schemas['TagMembersBulkRequest'],
): Promise<number> {
  const [brand] =
    await db`SELECT 1 FROM brands WHERE id = ${input.brand_id} AND organization_id = ANY(${scope.organizationIds})`;
  if (!brand) throw notFound('Brand');
  const tag = await findTag(db, scope, input.tag_id, input.brand_id);
  const result = await db`
    INSERT INTO tag_members (tag_id, member_id)
    SELECT ${tag.id}, bm.member_id
    FROM (SELECT DISTINCT u FROM unnest(${input.users}::uuid[]) AS u) AS users
    JOIN brand_members bm ON bm.brand_id = ${tag.brand_id} AND bm.member_id = users.u
    ON CONFLICT (tag_id, member_id) DO NOTHING`;
  return result.count;
}
