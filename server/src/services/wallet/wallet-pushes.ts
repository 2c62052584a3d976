import type { PendingQuery, Row } from 'postgres';
import type { Db, Sql } from '../../db/pool.js';
import { sha256 } from '../../lib/hash.js';

/**
 * Pushes to the devices registered for a pass (Apple's pass-update protocol: a push carries no
 * data, it only tells the device to ask GET /v1/devices/…/registrations what changed).
 *
 * The rule, one door for every writer: a change that shows on a pass (a storecard's points and
 * balance, a redemption, an expiry) queues ONE `wallet_push` job for the pass in the transaction of
 * the change, and only when the pass has registrations: a pass without devices (every pass of a
 * voucher job) costs one index probe and no row. The job (tasks/wallet-push.ts) sends one push per
 * registered device: to APNs with real credentials (services/wallet/apns.ts), else into the sandbox
 * push sink (wallet_pushes, read by GET /sandbox/wallet/pushes).
 */

/** The graphile-worker task of a pass's pushes (tasks/wallet-push.ts). */
export const WALLET_PUSH = 'wallet_push';

/** Attempts of a push job: a push is a hint, not data; APNs briefly away is retried, not forever. */
const PUSH_ATTEMPTS = 5;

/**
 * The push jobs of the passes `passIds` selects (one uuid column, each pass once), as a statement
 * to run or to compose into a CTE: one job per pass however many changes (its job key, so a burst
 * of scans of one pass is one push), one row per job.
 */
export const pushJobsOf = (db: Db, passIds: PendingQuery<Row[]>) => db`
  SELECT graphile_worker.add_job(${WALLET_PUSH}, json_build_object('pass_id', r.pass_id),
           job_key => ${`${WALLET_PUSH}:`} || r.pass_id::text, max_attempts => ${PUSH_ATTEMPTS}::int)
  FROM (${passIds}) AS r(pass_id)`;

/**
 * Queues the push job of each of these passes that has a registered device, in the caller's
 * transaction (pass the transaction as `db`). Answers how many jobs were queued.
 */
export async function queuePassPushes(db: Db, passIds: readonly string[]): Promise<number> {
  if (passIds.length === 0) return 0;
  const rows = await db`${pushJobsOf(
    db,
    db`SELECT DISTINCT pass_id FROM wallet_registrations WHERE pass_id = ANY(${passIds as string[]}::uuid[])`,
  )}`;
  return rows.length;
}

/**
 * The CTE `pushed` (one row: `jobs`, 0 or more) of a statement that changed passes: the push jobs
 * of those of the passes `changed` names (a CTE with an `id` column) that have devices, so the
 * change and its pushes are one statement (no round trip more for a scan). The statement must read
 * it (`CROSS JOIN pushed`): a plain SELECT in a WITH runs only when it is read.
 */
export const pushedAfter = (db: Db, changed: string) => db`
  pushed AS (
    SELECT count(*)::int AS jobs FROM (${pushJobsOf(
      db,
      db`SELECT DISTINCT r.pass_id FROM wallet_registrations r WHERE r.pass_id IN (SELECT id FROM ${db(changed)})`,
    )}) j
  )`;

/** One device to push to: its push token and the pass type (APNs' topic), of the pass's organization. */
export type PushTarget = { organization_id: string; push_token: string; topic: string };

/** The devices registered for a pass now: one target per push token (a token is one device). */
export async function pushTargetsOf(db: Db, passId: string): Promise<PushTarget[]> {
  return db<PushTarget[]>`
    SELECT DISTINCT ON (push_token) organization_id, push_token, pass_type_identifier AS topic
    FROM wallet_registrations WHERE pass_id = ${passId}
    ORDER BY push_token`;
}

/** The key of a push token in the sink (and of its waiting polls): its SHA-256, never the token. */
export const pushTokenKey = (pushToken: string): Buffer => sha256('wallet-push-token', pushToken);

/** The channel that wakes waiting GET /sandbox/wallet/pushes polls; the payload is the token key (hex). */
export const PUSH_CHANNEL = 'loyalty_wallet_pushes';

/**
 * The sandbox's APNs: records one push to `target` and wakes the polls of its token. Pushes to one
 * token are written one after the other (an advisory lock until commit), so their ids commit in
 * order and a reader's cursor never passes one that commits later.
 */
export async function recordSandboxPush(sql: Sql, target: PushTarget): Promise<void> {
  const key = pushTokenKey(target.push_token);
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`wallet_push:${key.toString('hex')}`}))`;
    await tx`
      INSERT INTO wallet_pushes (organization_id, push_token_hash, topic)
      VALUES (${target.organization_id}, ${key}, ${target.topic})`;
    await tx`SELECT pg_notify(${PUSH_CHANNEL}, ${key.toString('hex')})`;
  });
}

/** Removes the registrations of push tokens that APNs says are gone (410 Unregistered, BadDeviceToken). */
export async function forgetPushTokens(db: Db, pushTokens: readonly string[]): Promise<void> {
  if (pushTokens.length === 0) return;
  await db`DELETE FROM wallet_registrations WHERE push_token = ANY(${pushTokens as string[]}::text[])`;
}
