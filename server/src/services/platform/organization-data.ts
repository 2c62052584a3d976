import type { Sql, Tx } from '../../db/pool.js';
import { FAN_OUT_EVENTS } from './outbox.js';

/**
 * The one door that removes organizations' rows (issue 25): a sandbox reset of the caller's
 * organizations, deleting a throwaway organization, and retention of expired ones all go through
 * deleteOrganizationData. Every table of the schema is named below, either with the statement that
 * deletes one organization's rows from it or as holding no organization's rows (GLOBAL_TABLES);
 * organization-data.test.ts fails when a table is in neither list, so a new table cannot be forgotten.
 *
 * Plain DELETEs of those organizations' rows, in one transaction: row locks only (no TRUNCATE,
 * no table lock beyond ROW EXCLUSIVE), so other organizations' requests neither wait nor change.
 * Migration 0030 removed the catalogue foreign keys of the hot tables (brand_members, events,
 * deliveries…), so nothing cascades there: each table is deleted from explicitly, children first.
 */

/** What goes: the data only (a reset: the catalogue, clients and organization row stay) or everything. */
export type Removal = 'data' | 'everything';

type Step = { table: string; removal: Removal; run: (tx: Tx, ids: string[]) => Promise<unknown> };

/** The clients that belong to these organizations: API clients naming one of them, and device clients of their devices. */
const clientsOf = (tx: Tx, ids: string[]) => tx`
  SELECT client_id FROM clients WHERE organization_ids && ${ids}::text[]
  UNION SELECT c.client_id FROM clients c JOIN devices d ON d.id = c.device_id WHERE d.organization_id = ANY(${ids}::text[])`;

const brandsOf = (tx: Tx, ids: string[]) => tx`SELECT id FROM brands WHERE organization_id = ANY(${ids}::text[])`;
const tagsOf = (tx: Tx, ids: string[]) => tx`SELECT id FROM tags WHERE organization_id = ANY(${ids}::text[])`;
const subscriptionsOf = (tx: Tx, ids: string[]) =>
  tx`SELECT id FROM webhook_subscriptions WHERE organization_id = ANY(${ids}::text[])`;

/** graphile-worker tasks whose jobs carry organization data, and how their payload names it. */
const DATA_TASKS = ['deliver_webhook', FAN_OUT_EVENTS, 'issue_voucher_round', 'wallet_push'];

const STEPS: Step[] = [
  {
    // Queued background jobs first, while the rows their payloads name still exist: a delivery
    // lane names its subscription, a voucher round its job, a fan-out its events.
    table: 'graphile_worker._private_jobs',
    removal: 'data',
    run: (tx, ids) => tx`
      DELETE FROM graphile_worker._private_jobs j USING graphile_worker._private_tasks t
      WHERE t.id = j.task_id AND t.identifier = ANY(${DATA_TASKS}) AND CASE t.identifier
        WHEN 'deliver_webhook' THEN EXISTS (
          SELECT 1 FROM webhook_subscriptions s
          WHERE s.id::text = j.payload->>'subscription_id' AND s.organization_id = ANY(${ids}::text[]))
        WHEN 'issue_voucher_round' THEN EXISTS (
          SELECT 1 FROM voucher_jobs v WHERE v.id::text = j.payload->>'job_id' AND v.organization_id = ANY(${ids}::text[]))
        WHEN 'wallet_push' THEN EXISTS (
          SELECT 1 FROM passes p WHERE p.id::text = j.payload->>'pass_id' AND p.organization_id = ANY(${ids}::text[]))
        ELSE EXISTS (
          SELECT 1 FROM json_array_elements_text(j.payload::json->'event_ids') e(id)
          JOIN events ev ON ev.id = e.id::uuid WHERE ev.organization_id = ANY(${ids}::text[]))
      END`,
  },
  {
    table: 'webhook_attempts',
    removal: 'data',
    run: (tx, ids) => tx`
      DELETE FROM webhook_attempts WHERE delivery_id IN (
        SELECT id FROM webhook_deliveries WHERE subscription_id IN (${subscriptionsOf(tx, ids)}))`,
  },
  {
    table: 'webhook_deliveries',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM webhook_deliveries WHERE subscription_id IN (${subscriptionsOf(tx, ids)})`,
  },
  {
    table: 'webhook_lanes',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM webhook_lanes WHERE subscription_id IN (${subscriptionsOf(tx, ids)})`,
  },
  {
    table: 'webhook_subscriptions',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM webhook_subscriptions WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'voucher_job_lanes',
    removal: 'data',
    run: (tx, ids) => tx`
      DELETE FROM voucher_job_lanes WHERE job_id IN (SELECT id FROM voucher_jobs WHERE organization_id = ANY(${ids}::text[]))`,
  },
  {
    table: 'voucher_grants',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM voucher_grants WHERE tag_id IN (${tagsOf(tx, ids)})`,
  },
  {
    table: 'voucher_jobs',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM voucher_jobs WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'tag_members',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM tag_members WHERE tag_id IN (${tagsOf(tx, ids)})`,
  },
  {
    table: 'tag_passes',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM tag_passes WHERE tag_id IN (${tagsOf(tx, ids)})`,
  },
  {
    table: 'tags',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM tags WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'webshop_order_codes',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM webshop_order_codes WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'webshop_orders',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM webshop_orders WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'storecard_transactions',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM storecard_transactions WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    // Devices registered for the passes' updates, and the sandbox's record of pushes to them.
    table: 'wallet_registrations',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM wallet_registrations WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'wallet_pushes',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM wallet_pushes WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'passes',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM passes WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'brand_members',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM brand_members WHERE brand_id IN (${brandsOf(tx, ids)})`,
  },
  {
    table: 'members',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM members WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'events',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM events WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    // Keys carry their token's organizations (migration 0040); a key of a token of several
    // organizations goes when any of them is reset (its token is revoked below anyway).
    table: 'idempotency_keys',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM idempotency_keys WHERE organization_ids && ${ids}::text[]`,
  },
  {
    // Counters of the tokens revoked below, before they go: the rate limit counts per token, in
    // the bucket `token:<base64 of the token's hash>` (plugins/rate-limit.ts, tokens.ts tokenKey).
    table: 'rate_limits',
    removal: 'data',
    run: (tx, ids) => tx`
      DELETE FROM rate_limits WHERE bucket IN (
        SELECT 'token:' || encode(token_hash, 'base64') FROM access_tokens
        WHERE organization_ids && ${ids}::text[] OR client_id IN (${clientsOf(tx, ids)}))`,
  },
  {
    // Every token that reaches one of them (a token of several organizations too) and every token
    // of their clients: revoked.
    table: 'access_tokens',
    removal: 'data',
    run: (tx, ids) => tx`
      DELETE FROM access_tokens WHERE organization_ids && ${ids}::text[] OR client_id IN (${clientsOf(tx, ids)})`,
  },
  {
    table: 'request_logs',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM request_logs WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'sandbox_faults',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM sandbox_faults WHERE client_id IN (${clientsOf(tx, ids)})`,
  },
  {
    table: 'sandbox_clocks',
    removal: 'data',
    run: (tx, ids) => tx`DELETE FROM sandbox_clocks WHERE organization_id = ANY(${ids}::text[])`,
  },
  // The catalogue (from the fixture file, or made with a throwaway organization), its clients and
  // the organization itself: only when the organizations go for good.
  {
    table: 'promotion_products',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM promotion_products WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'promotions',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM promotions WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'product_values',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM product_values WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'product_variants',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM product_variants WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'products',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM products WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'locations',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM locations WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'coupons',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM coupons WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'storecards',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM storecards WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    // A brand's counts and buckets go with the brand, not with a reset: the brand_members DELETE
    // above brings them to 0 through its triggers (migrations 0038, 0039) and moves their version
    // on, so a process's page boundaries of the list before the reset are never taken for the
    // list after it (member-counts.ts: a version never comes back).
    table: 'brand_member_counts',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM brand_member_counts WHERE brand_id IN (${brandsOf(tx, ids)})`,
  },
  {
    table: 'brand_member_buckets',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM brand_member_buckets WHERE brand_id IN (${brandsOf(tx, ids)})`,
  },
  {
    table: 'brands',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM brands WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    // Their own clients go (those of no other organization, and their device clients); a client
    // that also reaches another organization stays, without these.
    table: 'clients',
    removal: 'everything',
    run: async (tx, ids) => {
      await tx`
        DELETE FROM clients c WHERE (c.organization_ids <> '{}' AND c.organization_ids <@ ${ids}::text[])
          OR c.device_id IN (SELECT id FROM devices WHERE organization_id = ANY(${ids}::text[]))`;
      await tx`
        UPDATE clients SET organization_ids = ARRAY(SELECT o FROM unnest(organization_ids) o WHERE NOT (o = ANY(${ids}::text[])))
        WHERE organization_ids && ${ids}::text[]`;
    },
  },
  {
    table: 'devices',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM devices WHERE organization_id = ANY(${ids}::text[])`,
  },
  {
    table: 'organizations',
    removal: 'everything',
    run: (tx, ids) => tx`DELETE FROM organizations WHERE id = ANY(${ids}::text[])`,
  },
];

/** Tables without any organization's rows, and why. */
export const GLOBAL_TABLES: Record<string, string> = {
  schema_migrations: 'the migrations applied',
  sandbox_clock: "the processes' cache generation (its resets); no organization's time since migration 0040",
};

/** Every table of the schema an organization has rows in (organization-data.test.ts compares with pg_tables). */
export const ORGANIZATION_TABLES: string[] = STEPS.map((s) => s.table).filter((t) => !t.includes('.'));

/**
 * Deletes every row of `organizationIds` from every table, and their queued background jobs, in
 * the caller's transaction. `data` (a reset) keeps the catalogue (brands, coupons, storecards,
 * locations, products, promotions, devices), the clients and the organization rows, and revokes
 * every token of them; `everything` removes those too (a client that also reaches another
 * organization stays, without these). Serialized per organization (an advisory lock each, in id
 * order), never with other organizations.
 */
export async function deleteOrganizationData(tx: Tx, organizationIds: string[], removal: Removal): Promise<void> {
  const ids = await lockOrganizationData(tx, organizationIds, 'exclusive');
  for (const step of STEPS) if (step.removal === 'data' || removal === 'everything') await step.run(tx, ids);
}

/**
 * Waits for removals of these organizations' data under way, and holds one off until the caller's
 * transaction ends (the removal's advisory lock, shared): a writer that checks first that an
 * organization still exists, and writes its rows in a later statement of the same transaction,
 * never leaves rows behind a removal (the request log's batches: a removal that went first is seen
 * by the check, one that comes later deletes what the writer committed).
 */
export async function holdOffOrganizationRemoval(tx: Tx, organizationIds: string[]): Promise<void> {
  await lockOrganizationData(tx, organizationIds, 'shared');
}

/**
 * The advisory lock of each organization's data until the transaction ends, taken in id order by
 * every holder and in one statement (unnest yields the array's order), so two removals never
 * deadlock. Answers the ids, sorted and without repeats.
 */
async function lockOrganizationData(
  tx: Tx,
  organizationIds: string[],
  mode: 'exclusive' | 'shared',
): Promise<string[]> {
  const ids = [...new Set(organizationIds)].sort();
  if (!ids.length) return ids;
  const keys = ids.map((id) => `loyalty_organization_data:${id}`);
  if (mode === 'exclusive') await tx`SELECT pg_advisory_xact_lock(hashtext(k)) FROM unnest(${keys}::text[]) AS k`;
  else await tx`SELECT pg_advisory_xact_lock_shared(hashtext(k)) FROM unnest(${keys}::text[]) AS k`;
  return ids;
}

/**
 * Runs `work` in a transaction of its own, again when PostgreSQL ended it to break a deadlock
 * (40P01): a delivery lane or voucher round of the same organization that held one of its rows
 * and wanted another the removal held (the worker runs on). At most 5 attempts. The one door for
 * every removal: an organization's data, a sandbox reset, DELETE /webhook-subscriptions/{id}
 * (a lane holds a delivery, then resets the subscription's failure count: the delete's order
 * is the other way round).
 */
export async function inRemovalTransaction<T>(sql: Sql, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(work)) as T;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 5) throw error;
      await new Promise((r) => setTimeout(r, 20 * attempt * Math.random()));
    }
  }
}
