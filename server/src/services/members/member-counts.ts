import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';

/**
 * A brand's member count as PostgreSQL keeps it (migration 0038: triggers on brand_members add
 * each statement's delta to the brand's shards of brand_member_counts in the same transaction).
 * Exact in the reader's snapshot; reading it costs the brand's few shard rows, never a count.
 *
 * `version` changes with every committed change to the brand's list of links (a link, an unlink,
 * a link moved to another brand, TRUNCATE) and never comes back to an earlier value, even after
 * the table is emptied by a sandbox reset: what a process remembers about the list (page
 * boundaries, member-pages.ts) is valid exactly while the version is the same.
 */
export type MemberCount = { total: number; version: string };

export async function readMemberCount(db: Db, brandId: string): Promise<MemberCount> {
  const rows = await db<{ total: string; version: string }[]>`
    SELECT coalesce(sum(members), 0)::text AS total,
           coalesce(sum(changes), 0)::text || '.' || coalesce(max(born), 0)::text AS version
    FROM brand_member_counts WHERE brand_id = ${brandId}`;
  const row = firstRow(rows, 'the member count of the brand');
  return { total: Number(row.total), version: row.version };
}
