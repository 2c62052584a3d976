import type { PendingQuery, Row } from 'postgres';
import type { Db } from '../../db/pool.js';
import type { Schemas } from '../../lib/schemas.js';
import { parseDateTime } from '../../lib/dates.js';
import { invalid } from '../platform/errors.js';
import { requireBrand } from '../platform/members-scope.js';
import { checkProfile } from './members.js';
import { recordedAndQueued } from '../platform/outbox.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

export type SignupInput = {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  unsubscribed?: boolean | null;
  subscribed_at?: string | null;
};

type SignupsResult = Schemas['SignupsImported']['data'];

type User = {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean;
  subscribed_at: string | null;
};

/**
 * Imports sign-ups set-based, in one statement for new e-mails and a second one only when some
 * were known: the first inserts the members and links them to the brand (their `unsubscribed`
 * and `subscribed_at` from the import); the second links the known members that were not linked
 * yet and finds the ids of all of them (nothing of a known member or link is overwritten). Each
 * statement also records the member.created events of the links it made and queues their fan-out
 * (eventsOfLinks): no event list travels to the server and back.
 * Duplicate e-mails (case-insensitive) count once, under their first spelling.
 *
 * ON CONFLICT waits for a concurrent import of the same e-mail, so after the first statement
 * every e-mail is a member this statement inserted or one that the next statement can see. Rows
 * that concurrent imports may both claim go in one global order (members by e-mail, links of
 * known members by id), so two imports wait for each other instead of deadlocking; new members
 * join the brand in input order.
 */
export async function importSignups(
  tx: Db,
  scope: OrganizationScope,
  input: { brand_id: string; users: SignupInput[] },
  now = new Date(),
): Promise<SignupsResult> {
  const errors: Record<string, string[]> = {};
  const seen = new Set<string>();
  const users: User[] = [];
  // An import often stamps many users alike: each distinct value is read once.
  const stamps = new Map<string, string | 'invalid' | 'future'>();
  const stamp = (value: string) => {
    let read = stamps.get(value);
    if (read === undefined) {
      const at = parseDateTime(value);
      read = !at ? 'invalid' : at.getTime() >= now.getTime() ? 'future' : at.toISOString();
      stamps.set(value, read);
    }
    return read;
  };
  input.users.forEach((u, i) => {
    if ((u.first_name?.length ?? 0) > 191 || (u.last_name?.length ?? 0) > 191) {
      Object.assign(errors, checkProfile({ first_name: u.first_name, last_name: u.last_name }, `users.${i}.`));
    }
    let subscribedAt: string | null = null;
    if (u.subscribed_at != null) {
      const at = stamp(u.subscribed_at);
      if (at === 'invalid')
        errors[`users.${i}.subscribed_at`] = [`The users.${i}.subscribed_at field must be a valid date-time.`];
      else if (at === 'future')
        errors[`users.${i}.subscribed_at`] = [`The users.${i}.subscribed_at field must be a date before now.`];
      else subscribedAt = at;
    }
    const key = u.email.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    users.push({
      email: u.email,
      first_name: u.first_name ?? null,
      last_name: u.last_name ?? null,
      unsubscribed: u.unsubscribed ?? false,
      subscribed_at: subscribedAt,
    });
  });
  if (Object.keys(errors).length) throw invalid(errors);
  const brand = await requireBrand(tx, scope, input.brand_id);

  const created = new Map<string, string>();
  const found = new Map<string, { id: string; linked: boolean }>();
  let pending = users;
  // A known member deleted between the two statements is new again: the loop inserts it.
  for (let attempt = 1; pending.length; attempt++) {
    if (attempt > 3) throw new Error(`${pending.length} members kept being deleted while they were imported`);
    for (const r of await insertNew(tx, brand.id, brand.organizationId, pending)) created.set(r.email, r.id);
    const known = pending.filter((u) => !created.has(u.email));
    if (known.length) for (const r of await linkKnown(tx, brand.id, brand.organizationId, known)) found.set(r.email, r);
    pending = known.filter((u) => !found.has(u.email));
  }

  const result: SignupsResult = { new: emailMap(), found: emailMap() };
  for (const u of users) {
    const id = created.get(u.email) ?? found.get(u.email)?.id;
    if (id !== undefined) result[created.has(u.email) ? 'new' : 'found'][u.email] = id;
  }
  return result;
}

/**
 * An object keyed by e-mail, filled in input order. Without a prototype an e-mail such as
 * "__proto__" stays a plain key, and filling it by assignment costs a third of Object.fromEntries
 * (2.5 against 7.9 ms for 2000 fresh keys, measured with Node 24).
 */
const emailMap = (): Record<string, string> => Object.create(null) as Record<string, string>;

/** PostgreSQL's type oid of boolean: postgres.js would otherwise type a JS boolean array as one boolean. */
const BOOL = 16;

/** The input as one set: parallel arrays through unnest (far cheaper to read than JSON). */
const inputOf = (tx: Db, users: User[]) => tx`
  unnest(${users.map((u) => u.email)}::text[], ${users.map((u) => u.first_name)}::text[], ${users.map((u) => u.last_name)}::text[],
         ${tx.array(
           users.map((u) => u.unsubscribed),
           BOOL,
         )}::boolean[], ${users.map((u) => u.subscribed_at)}::text[]::timestamptz[])
    WITH ORDINALITY AS i(email, first_name, last_name, unsubscribed, subscribed_at, ord)`;

/** Inserts the e-mails that are new to the organization and links them; answers what it inserted. */
function insertNew(tx: Db, brandId: string, organizationId: string, users: User[]) {
  // A member inserted here cannot have a link yet, so the link is a plain insert. Each input row
  // gets its member's id before the insert, so the links take the inserted rows' ids by a hash
  // semi-join on the id instead of joining back on the e-mail (two sorts of 2000 texts and a merge:
  // 14% of the statement, measured alternating both forms over 20 imports of 2000).
  return tx<{ email: string; id: string }[]>`
    WITH input AS MATERIALIZED (SELECT i.*, uuidv7() AS id FROM ${inputOf(tx, users)}),
    inserted AS (
      INSERT INTO members (id, organization_id, email, first_name, last_name)
      SELECT id, ${organizationId}, email, first_name, last_name FROM input ORDER BY lower(email)
      ON CONFLICT (organization_id, lower(email)) DO NOTHING
      RETURNING id, email
    ), linked AS (
      INSERT INTO brand_members (brand_id, member_id, unsubscribed, subscribed_at)
      SELECT ${brandId}, i.id, i.unsubscribed, coalesce(i.subscribed_at, now())
      FROM input i WHERE i.id IN (SELECT id FROM inserted)
      ORDER BY i.ord
    ), ${eventsOfLinks(tx, organizationId, brandId, tx`SELECT id AS member_id FROM inserted`)}
    SELECT email, id FROM inserted CROSS JOIN queued`;
}

/**
 * Finds the known members and links those not linked to the brand yet (`linked`). The members
 * are locked FOR KEY SHARE first, the lock the dropped foreign key took (migration 0031), so a
 * concurrent delete cannot remove a member this import links; one it removed already is absent.
 */
function linkKnown(tx: Db, brandId: string, organizationId: string, users: User[]) {
  return tx<{ email: string; id: string; linked: boolean }[]>`
    WITH found AS (
      SELECT m.id, i.* FROM ${inputOf(tx, users)}
      JOIN members m ON m.organization_id = ${organizationId} AND lower(m.email) = lower(i.email)
      ORDER BY m.id
      FOR KEY SHARE OF m
    ), linked AS (
      INSERT INTO brand_members (brand_id, member_id, unsubscribed, subscribed_at)
      SELECT ${brandId}, f.id, f.unsubscribed, coalesce(f.subscribed_at, now()) FROM found f
      ORDER BY f.id
      ON CONFLICT DO NOTHING
      RETURNING member_id
    ), ${eventsOfLinks(tx, organizationId, brandId, tx`SELECT member_id FROM linked`)}
    SELECT f.email, f.id, (l.member_id IS NOT NULL) AS linked
    FROM found f LEFT JOIN linked l ON l.member_id = f.id CROSS JOIN queued`;
}

/**
 * The CTEs `recorded` and `queued` of a linking statement (outbox.ts): one member.created event
 * per member `links` answers (its `member_id`), and one fan-out job for them when the organization
 * listens to member.created. The statement must read `queued` (CROSS JOIN queued).
 */
const eventsOfLinks = (tx: Db, organizationId: string, brandId: string, links: PendingQuery<Row[]>) =>
  recordedAndQueued(
    tx,
    tx`SELECT ${organizationId}::text AS organization_id, 'member.created' AS type,
              jsonb_build_object('member_id', l.member_id, 'brand_id', ${brandId}::text) AS data
       FROM (${links}) l`,
    { organizationIds: [organizationId], types: ['member.created'] },
  );
