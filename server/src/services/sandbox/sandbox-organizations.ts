import { randomBytes, randomUUID } from 'node:crypto';
import type { Sql } from '../../db/pool.js';
import { randomToken } from '../../lib/hash.js';
import type { Schemas } from '../../lib/schemas.js';
import { invalidField, notFound } from '../platform/errors.js';
import { loadFixture } from '../platform/fixtures.js';
import { deleteOrganizationData, inRemovalTransaction } from '../platform/organization-data.js';
import { parseDuration } from './sandbox-clock.js';
import { bumpGeneration } from './sandbox-reset.js';

/** Live throwaway organizations one creating client may have at once; the next is a 422 on `organizations`. */
export const MAX_LIVE_PER_CREATOR = 50;
/** Longest time to live: 7 days. */
export const MAX_TTL_SECONDS = 7 * 86_400;
const DEFAULT_TTL = '1h';

/** The API abilities (every one an admin client holds); the read-only client gets the `.get` ones. */
export const API_ABILITIES = [
  'tags.get',
  'tags.store',
  'members.get',
  'members.store',
  'passes.store',
  'webhooks.get',
  'webhooks.store',
];
const ADMIN_ABILITIES = [...API_ABILITIES, 'sandbox.manage'];
const READONLY_ABILITIES = API_ABILITIES.filter((a) => a.endsWith('.get'));

/** Who asks: the operator, or a token's client with its abilities and organizations. */
export type SandboxCaller = { clientId: string; abilities: string[]; organizationIds: string[]; operator: boolean };

export type CreatedSandboxOrganization = Schemas['SandboxOrganizationCreated'];

/**
 * POST /sandbox/organizations (issue 25): a throwaway organization with a brand, a coupon (14
 * valid days), a storecard and two clients (admin: every API ability and sandbox.manage;
 * readonly: the `.get` ones) with fresh random ids and secrets, of which only hashes are stored
 * (services/platform/fixtures.ts, as for fixture clients). It expires `ttl` of real time from now; the
 * scheduled retention then removes it (removeExpiredOrganizations). At most MAX_LIVE_PER_CREATOR
 * live ones per creating client, counted under a lock of that client, in the creating transaction.
 */
export async function createSandboxOrganization(
  sql: Sql,
  caller: SandboxCaller,
  input: { ttl?: string; name?: string },
): Promise<CreatedSandboxOrganization> {
  const ttl = input.ttl ?? DEFAULT_TTL;
  const seconds = parseDuration(ttl);
  if (seconds === null) throw invalidField('ttl', 'The ttl field must be a duration such as 30m, 1h or 2d.');
  if (seconds > MAX_TTL_SECONDS) throw invalidField('ttl', 'The ttl field must be at most 7d.');
  const id = `sbx-${randomBytes(6).toString('hex')}`;
  const name = input.name ?? `Sandbox ${id}`;
  const brandId = randomUUID();
  const couponId = randomUUID();
  const storecardId = randomUUID();
  const clients = {
    admin: { client_id: `${id}-admin`, client_secret: randomToken(24), abilities: ADMIN_ABILITIES },
    readonly: { client_id: `${id}-readonly`, client_secret: randomToken(24), abilities: READONLY_ABILITIES },
  };
  const expiresAt = await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`loyalty_sandbox_organizations:${caller.clientId}`}))`;
    const [live] = await tx<{ n: number }[]>`
      SELECT count(*)::int AS n FROM organizations WHERE created_by_client = ${caller.clientId} AND expires_at > now()`;
    if ((live?.n ?? 0) >= MAX_LIVE_PER_CREATOR)
      throw invalidField(
        'organizations',
        `This client already has ${MAX_LIVE_PER_CREATOR} live sandbox organizations: delete one or wait until one expires.`,
      );
    await loadFixture(tx, {
      organizations: [
        {
          id,
          name,
          brands: [{ id: brandId, name: `${name} brand` }],
          coupons: [{ id: couponId, brand_id: brandId, title: 'Sandbox coupon', valid_days: 14 }],
          storecards: [{ id: storecardId, brand_id: brandId, title: 'Sandbox storecard' }],
        },
      ],
      clients: Object.values(clients).map((c) => ({ ...c, organization_ids: [id] })),
    });
    const [row] = await tx<{ expires_at: Date }[]>`
      UPDATE organizations SET expires_at = now() + make_interval(secs => ${seconds}), created_by_client = ${caller.clientId}
      WHERE id = ${id} RETURNING expires_at`;
    return (row as { expires_at: Date }).expires_at;
  });
  return {
    organization: { id, name, expires_at: expiresAt.toISOString() },
    brand_id: brandId,
    coupon_id: couponId,
    storecard_id: storecardId,
    clients,
  };
}

/**
 * DELETE /sandbox/organizations/{id}: the operator, the client that created it (sandbox.create) or
 * the organization's own admin (sandbox.manage) removes a throwaway organization with all its data,
 * clients and tokens. Anything else, including the fixture file's organizations, is not found.
 */
export async function deleteSandboxOrganization(sql: Sql, caller: SandboxCaller, id: string): Promise<void> {
  await inRemovalTransaction(sql, async (tx) => {
    const [org] = await tx<{ created_by_client: string | null }[]>`
      SELECT created_by_client FROM organizations WHERE id = ${id} AND expires_at IS NOT NULL FOR UPDATE`;
    const allowed =
      org &&
      (caller.operator ||
        (caller.abilities.includes('sandbox.create') && org.created_by_client === caller.clientId) ||
        (caller.abilities.includes('sandbox.manage') && caller.organizationIds.includes(id)));
    if (!allowed) throw notFound('Organization');
    await deleteOrganizationData(tx, [id], 'everything');
  });
  await bumpGeneration(sql);
}

/**
 * Retention of throwaway organizations (tasks/prune-old-rows.ts): each one whose expires_at (real
 * time) has passed is removed with all its data, one transaction each, at most `limit` a run
 * (the next run carries on). Returns how many went.
 */
export async function removeExpiredOrganizations(sql: Sql, limit = 20): Promise<number> {
  let removed = 0;
  for (let i = 0; i < limit; i++) {
    const gone = await inRemovalTransaction(sql, async (tx) => {
      const [org] = await tx<{ id: string }[]>`
        SELECT id FROM organizations WHERE expires_at <= now() ORDER BY expires_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
      if (!org) return false;
      await deleteOrganizationData(tx, [org.id], 'everything');
      return true;
    });
    if (!gone) break;
    removed++;
  }
  if (removed) await bumpGeneration(sql);
  return removed;
}
