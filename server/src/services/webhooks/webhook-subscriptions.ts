import type { Db, Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { newWebhookSecret } from '@loyalty/sdk/signing';
import { DomainError, invalidField, notFound } from '../platform/errors.js';
import { allLaneKeys } from './deliveries.js';
import { isUuid } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { type FilterColumns, filterToColumns, presentFilter } from './subscription-filter.js';

export const MAX_SUBSCRIPTIONS_PER_ORGANIZATION = 20;
export const ROTATION_OVERLAP_HOURS = 24;

export type SubscriptionRow = FilterColumns & {
  id: string;
  organization_id: string;
  url: string;
  events: Schemas['EventType'][];
  active: boolean;
  description: string | null;
  disabled_reason: Schemas['WebhookDisabledReason'] | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  consecutive_failures: number;
  created_at: Date;
};

/** The columns of a SubscriptionRow (never the secrets). */
export const subscriptionColumns = (db: Db) =>
  db`id, organization_id, url, events, active, description, disabled_reason, disabled_at, failing_since, consecutive_failures, created_at,
      filter_brand_ids, filter_points_min, filter_points_types`;

export const presentSubscription = (s: SubscriptionRow): Schemas['WebhookSubscription'] => ({
  id: s.id,
  organization_id: s.organization_id,
  url: s.url,
  events: s.events,
  filter: presentFilter(s),
  active: s.active,
  description: s.description,
  disabled_reason: s.disabled_reason,
  disabled_at: s.disabled_at?.toISOString() ?? null,
  failing_since: s.failing_since?.toISOString() ?? null,
  consecutive_failures: s.consecutive_failures,
  created_at: s.created_at.toISOString(),
});

/**
 * The organization a subscription or feed request is about: the `organization_id` sent (404 when
 * the token cannot access it), or the token's only organization (422 when it has several).
 */
export function requireOrganization(scope: OrganizationScope, organizationId: string | undefined): string {
  if (organizationId !== undefined) {
    if (!scope.organizationIds.includes(organizationId)) throw notFound('Organization');
    return organizationId;
  }
  const [first] = scope.organizationIds;
  if (first === undefined) throw notFound('Organization');
  if (scope.organizationIds.length === 1) return first;
  throw invalidField(
    'organization_id',
    'The organization_id field is required when the token has access to several organizations.',
  );
}

/** GET /webhook-subscriptions: every accessible organization's, or the one named. */
export async function listSubscriptions(db: Db, scope: OrganizationScope, organizationId?: string) {
  const orgs = organizationId === undefined ? scope.organizationIds : [requireOrganization(scope, organizationId)];
  const rows = await db<SubscriptionRow[]>`
    SELECT ${subscriptionColumns(db)} FROM webhook_subscriptions
    WHERE organization_id = ANY(${orgs}) ORDER BY created_at, id`;
  return rows.map(presentSubscription);
}

/**
 * POST /webhook-subscriptions. The URL has been checked by the caller (checkWebhookUrl, which
 * may resolve DNS: not inside a transaction). The limit of 20 per organization holds under
 * concurrency: creations for one organization take a transaction-scoped advisory lock first.
 * The secret is stored sealed (`secrets`) and answered in plaintext this once.
 */
export async function createSubscription(
  db: Db,
  scope: OrganizationScope,
  input: Schemas['CreateWebhookSubscriptionRequest'],
  secrets: SecretBox,
) {
  const organizationId = requireOrganization(scope, input.organization_id);
  await db`SELECT pg_advisory_xact_lock(hashtextextended('webhook_subscriptions:' || ${organizationId}, 0))`;
  const counts = await db<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE organization_id = ${organizationId}`;
  if (firstRow(counts, 'the count of subscriptions').n >= MAX_SUBSCRIPTIONS_PER_ORGANIZATION) {
    throw new DomainError(
      'unprocessable',
      'subscription_limit_reached',
      `An organization can have at most ${MAX_SUBSCRIPTIONS_PER_ORGANIZATION} webhook subscriptions.`,
    );
  }
  const filter = await filterToColumns(db, organizationId, input.filter ?? null);
  const secret = newWebhookSecret();
  const inserted = await db<SubscriptionRow[]>`
    INSERT INTO webhook_subscriptions (organization_id, url, events, secret, description, filter_brand_ids, filter_points_min, filter_points_types)
    VALUES (${organizationId}, ${input.url}, ${[...new Set(input.events)]}, ${secrets.seal(secret)}, ${input.description ?? null},
            ${filter.filter_brand_ids}, ${filter.filter_points_min}, ${filter.filter_points_types})
    RETURNING ${subscriptionColumns(db)}`;
  return { ...presentSubscription(firstRow(inserted, 'the inserted subscription')), secret };
}

/** A subscription of one of the token's organizations; 404 for unknown and foreign ids alike. */
export async function requireSubscription(
  db: Db,
  scope: OrganizationScope,
  id: string,
  { lock = false } = {},
): Promise<SubscriptionRow> {
  if (!isUuid(id)) throw notFound('Subscription');
  const [row] = await db<SubscriptionRow[]>`
    SELECT ${subscriptionColumns(db)} FROM webhook_subscriptions
    WHERE id = ${id} AND organization_id = ANY(${scope.organizationIds}) ${lock ? db`FOR UPDATE` : db``}`;
  if (!row) throw notFound('Subscription');
  return row;
}

/**
 * DELETE /webhook-subscriptions/{id}: its delivery lanes are removed from the queue, and the
 * deliveries and their log go with the subscription (so a queued first attempt finds nothing and
 * sends nothing). An attempt already in flight finishes; its result has nowhere to be recorded.
 */
export async function deleteSubscription(db: Db, scope: OrganizationScope, id: string) {
  await requireSubscription(db, scope, id, { lock: true });
  // Its delivery lanes leave the queue (services/webhooks/deliveries.ts).
  await db`SELECT graphile_worker.remove_job(k) FROM unnest(${allLaneKeys(id)}::text[]) k`;
  await db`DELETE FROM webhook_subscriptions WHERE id = ${id}`;
  return { id, deleted: true as const };
}

/**
 * POST /webhook-subscriptions/{id}/rotate-secret: the current secret becomes the previous one
 * and keeps signing for 24 hours next to the new one; an older previous secret stops at once.
 */
export async function rotateSecret(db: Db, scope: OrganizationScope, id: string, secrets: SecretBox) {
  await requireSubscription(db, scope, id, { lock: true });
  const secret = newWebhookSecret();
  const rows = await db<{ previous_secret_expires_at: Date }[]>`
    UPDATE webhook_subscriptions
    SET previous_secret = secret, secret = ${secrets.seal(secret)},
        previous_secret_expires_at = loyalty_now(organization_id) + make_interval(hours => ${ROTATION_OVERLAP_HOURS})
    WHERE id = ${id}
    RETURNING previous_secret_expires_at`;
  const row = firstRow(rows, 'the rotated subscription');
  return { id, secret, previous_secret_expires_at: row.previous_secret_expires_at.toISOString() };
}

/**
 * Start-up, after migrations: every stored secret sealed with the current key. Plaintext secrets
 * of databases from before encryption and secrets sealed with LOYALTY_SECRET_KEY_PREVIOUS are
 * sealed again; a row changed meanwhile (a rotation by another process) keeps that change.
 * Idempotent. Throws SecretKeyError, writing nothing, when a secret opens with neither key.
 * Returns the number of subscriptions sealed again.
 */
export async function sealWebhookSecrets(sql: Sql, secrets: SecretBox): Promise<number> {
  const prefix = secrets.currentPrefix();
  const rows = await sql<{ id: string; secret: string; previous_secret: string | null }[]>`
    SELECT id, secret, previous_secret FROM webhook_subscriptions
    WHERE NOT starts_with(secret, ${prefix}) OR NOT starts_with(previous_secret, ${prefix})`;
  if (!rows.length) return 0;
  const reseal = (value: string) => (value.startsWith(prefix) ? value : secrets.seal(secrets.open(value)));
  const sealed = rows.map((r) => ({
    ...r,
    new_secret: reseal(r.secret),
    new_previous: r.previous_secret === null ? null : reseal(r.previous_secret),
  }));
  const updated = await sql`
    UPDATE webhook_subscriptions s SET secret = v.new_secret, previous_secret = v.new_previous
    FROM unnest(${sealed.map((r) => r.id)}::uuid[], ${sealed.map((r) => r.secret)}::text[], ${sealed.map((r) => r.previous_secret)}::text[],
                ${sealed.map((r) => r.new_secret)}::text[], ${sealed.map((r) => r.new_previous)}::text[])
           AS v(id, secret, previous_secret, new_secret, new_previous)
    WHERE s.id = v.id AND s.secret = v.secret AND s.previous_secret IS NOT DISTINCT FROM v.previous_secret`;
  return updated.count;
}
