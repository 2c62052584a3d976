import type { Sql, Tx } from '../../db/pool.js';
import { loadFixtureFile } from '../platform/fixtures.js';
import { deleteOrganizationData, inRemovalTransaction } from '../platform/organization-data.js';
import { FAN_OUT_EVENTS } from '../platform/outbox.js';

/** Tables a reset keeps: the migrations' record, and the clock (set back to 0, its resets counted). */
const KEPT = ['schema_migrations', 'sandbox_clock'];

/** graphile-worker tasks whose jobs are data (a reset removes them); the crons stay. */
const DATA_TASKS = ['deliver_webhook', FAN_OUT_EVENTS, 'issue_voucher_round', 'wallet_push'];

/**
 * POST /sandbox/reset of the caller's organizations (issue 25): their rows deleted from every
 * table and their queued jobs removed (services/platform/organization-data.ts; the catalogue, clients and
 * organization rows stay), every token of them revoked, and their records of the fixture file
 * loaded again, in ONE transaction of row locks: other organizations' requests neither wait nor
 * see a change. A request of a reset organization sees all of it or none. Afterwards the count of
 * resets moves, so every process drops its cached tokens (services/platform/tokens.ts); the revoked ones
 * then answer 401. Returns how long it took, in milliseconds.
 */
export async function resetOrganizations(sql: Sql, fixtures: string, organizationIds: string[]): Promise<number> {
  const started = performance.now();
  await inRemovalTransaction(sql, async (tx) => {
    await deleteOrganizationData(tx, organizationIds, 'data');
    await loadFixtureFile(tx, fixtures, { organizationIds });
    await markRequestLogReset(tx, organizationIds);
  });
  await bumpGeneration(sql);
  return Math.round(performance.now() - started);
}

export async function organizationExists(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM organizations WHERE id = ${id}`;
  return rows.length > 0;
}

/** Every organization's id (after a whole-server reset: the fixture file's). */
export async function allOrganizationIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`SELECT id FROM organizations ORDER BY id`;
  return rows.map((r) => r.id);
}

/** Caches of tokens in every process are void (the processes read the count at most a second later). */
export const bumpGeneration = (sql: Sql) => sql`UPDATE sandbox_clock SET resets = resets + 1 WHERE one`;

/**
 * The operator's whole-server reset (`{"scope":"server"}` with LOYALTY_SANDBOX_OPERATOR_TOKEN):
 * every table emptied (members, passes, tags, tokens, idempotency keys, events, subscriptions, deliveries, voucher jobs, rate-limit counters…), the queued jobs of
 * data tasks removed, the clock's offset back to 0, and the fixture file loaded again, in ONE
 * transaction. TRUNCATE takes each table's ACCESS EXCLUSIVE lock until the commit, so a
 * concurrent request waits for the reset and then sees all of it, or ran before it: never half
 * a reset. Tokens issued before are gone (the fixtures seed the clients again; ask for new
 * tokens). Returns how long it took, in milliseconds.
 */
export async function resetSandbox(sql: Sql, fixtures: string): Promise<number> {
  const started = performance.now();
  // A request that held one table and wanted another while the reset held that one: PostgreSQL
  // ends one of the two (deadlock_detected); when it is the reset, it runs again.
  await inRemovalTransaction(sql, async (tx) => {
    // One reset at a time (a second waits, then resets again).
    await tx`SELECT pg_advisory_xact_lock(hashtext('loyalty_sandbox_reset'))`;
    const tables = await tx<{ name: string }[]>`
      SELECT quote_ident(tablename) AS name FROM pg_tables
      WHERE schemaname = current_schema() AND NOT (tablename = ANY(${KEPT}))
      ORDER BY tablename`;
    if (tables.length) await tx.unsafe(`TRUNCATE ${tables.map((t) => t.name).join(', ')} RESTART IDENTITY CASCADE`);
    await tx`
      DELETE FROM graphile_worker._private_jobs j USING graphile_worker._private_tasks t
      WHERE t.id = j.task_id AND t.identifier = ANY(${DATA_TASKS})`;
    await tx`UPDATE sandbox_clock SET offset_seconds = 0, resets = resets + 1 WHERE one`;
    await loadFixtureFile(tx, fixtures);
    await markRequestLogReset(tx);
  });
  return Math.round(performance.now() - started);
}

/**
 * Entries of requests answered before the reset began, still waiting in another API process's
 * buffer, are left out when it writes them (request-log-buffer.ts; migration 0048): the reset
 * emptied the log, and it stays empty of what came before. This process's waiting entries were
 * written first (writeWaitingRequestLogs) and deleted with the rest. `now()`: the reset's start.
 */
async function markRequestLogReset(tx: Tx, organizationIds?: string[]): Promise<void> {
  await tx`UPDATE organizations SET request_log_since = now()
           ${organizationIds ? tx`WHERE id = ANY(${organizationIds}::text[])` : tx``}`;
}
