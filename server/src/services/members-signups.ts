import type { Db } from '../db/pool.js';
import { parseDateTime } from '../lib/dates.js';
import { invalid } from './errors.js';
import { recordEvents } from './events.js';
import { requireBrand, type Scope } from './members-scope.js';
import { checkProfile } from './members.js';

export type SignupInput = {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean | null;
  subscribed_at?: string | null;
};

export type SignupsResult = { new: Record<string, string>; found: Record<string, string> };

type Row = { email: string; id: string; is_new: boolean; linked: boolean };

/**
 * Imports sign-ups set-based: one statement inserts the new members, links every member to the
 * brand (new links take `unsubscribed` and `subscribed_at` from the import; existing members and
 * links are never overwritten) and answers e-mail → id for all of them. A second pass covers the
 * rare e-mail that a concurrent request inserted after this statement's snapshot. Duplicate
 * e-mails (case-insensitive) count once, under their first spelling.
 */
export async function importSignups(tx: Db, scope: Scope, input: { brand_id: string; users: SignupInput[] }, now = new Date()): Promise<SignupsResult> {
  const errors: Record<string, string[]> = {};
  const users = input.users.map((u, i) => {
    Object.assign(errors, checkProfile({ first_name: u.first_name, last_name: u.last_name }, `users.${i}.`));
    let subscribedAt: string | null = null;
    if (u.subscribed_at != null) {
      const at = parseDateTime(u.subscribed_at);
      if (!at) errors[`users.${i}.subscribed_at`] = [`The users.${i}.subscribed_at field must be a valid date-time.`];
      else if (at.getTime() >= now.getTime()) errors[`users.${i}.subscribed_at`] = [`The users.${i}.subscribed_at field must be a date before now.`];
      else subscribedAt = at.toISOString();
    }
    return { ord: i, email: u.email, first_name: u.first_name ?? null, last_name: u.last_name ?? null, unsubscribed: u.unsubscribed ?? false, subscribed_at: subscribedAt };
  });
  if (Object.keys(errors).length) throw invalid(errors);
  const brand = await requireBrand(tx, scope, input.brand_id);

  const rows = await upsertSignups(tx, brand.id, brand.organizationId, users);
  const answered = new Set(rows.map((r) => r.email.toLowerCase()));
  const retry = users.filter((u) => !answered.has(u.email.toLowerCase()));
  if (retry.length) rows.push(...(await upsertSignups(tx, brand.id, brand.organizationId, retry)));

  await recordEvents(tx, rows.filter((r) => r.linked).map((r) => ({
    organizationId: brand.organizationId, type: 'member.created' as const, data: { member_id: r.id, brand_id: brand.id },
  })));
  // fromEntries defines own properties, so an e-mail like "__proto__" stays a plain key.
  const entries = { new: [] as [string, string][], found: [] as [string, string][] };
  for (const r of rows) entries[r.is_new ? 'new' : 'found'].push([r.email, r.id]);
  return { new: Object.fromEntries(entries.new), found: Object.fromEntries(entries.found) };
}

async function upsertSignups(
  tx: Db, brandId: string, organizationId: string,
  users: { ord: number; email: string; first_name: string | null; last_name: string | null; unsubscribed: boolean; subscribed_at: string | null }[],
): Promise<Row[]> {
  return tx<Row[]>`
    WITH input AS (
      SELECT DISTINCT ON (lower(u.email)) u.ord, u.email, lower(u.email) AS key, u.first_name, u.last_name, u.unsubscribed, u.subscribed_at
      FROM jsonb_to_recordset(${tx.json(users as never)})
        AS u(ord int, email text, first_name text, last_name text, unsubscribed boolean, subscribed_at timestamptz)
      ORDER BY lower(u.email), u.ord
    ), inserted AS (
      INSERT INTO members (organization_id, email, first_name, last_name)
      SELECT ${organizationId}, i.email, i.first_name, i.last_name FROM input i ORDER BY i.ord
      ON CONFLICT (organization_id, lower(email)) DO NOTHING
      RETURNING id, lower(email) AS key
    ), existing AS (
      -- Rows inserted above are invisible here (one snapshot), so only the e-mails the insert
      -- skipped are looked up.
      SELECT m.id, i.key FROM input i
      JOIN members m ON m.organization_id = ${organizationId} AND lower(m.email) = i.key
      WHERE NOT EXISTS (SELECT 1 FROM inserted n WHERE n.key = i.key)
    ), found AS (
      SELECT id, key, true AS is_new FROM inserted
      UNION ALL
      SELECT id, key, false AS is_new FROM existing
    ), linked AS (
      INSERT INTO brand_members (brand_id, member_id, unsubscribed, subscribed_at)
      SELECT ${brandId}, f.id, i.unsubscribed, coalesce(i.subscribed_at, now())
      FROM found f JOIN input i ON i.key = f.key
      ORDER BY i.ord
      ON CONFLICT DO NOTHING
      RETURNING member_id
    )
    SELECT i.email, f.id, f.is_new, (l.member_id IS NOT NULL) AS linked
    FROM input i JOIN found f ON f.key = i.key LEFT JOIN linked l ON l.member_id = f.id
    ORDER BY i.ord`;
}
