import type { PendingQuery, Row } from 'postgres';
import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';

/**
 * The transactional outbox, the only writer of the `events` table and the only place that queues
 * their fan-out. The rule: events are inserted in the transaction of the change that caused them,
 * and ONE `fan_out_events` job is queued for them in the same transaction, only when an active
 * subscription of their organization listens to one of their types (tasks/fan_out_events.ts then
 * creates and schedules the deliveries). Payloads carry identifiers only: never names or e-mail
 * addresses.
 *
 * Three ways in, one SQL text each:
 * - row-wise, `recordEvents`: a list of events built by the server, in one statement;
 * - set-based, `recordedAndQueued`: the CTEs a larger statement composes when it makes the events
 *   from its own rows (a sign-up import's links), so no event list travels to the server and back;
 * - set-based with the job queued later, `recorded` then `queueFanOut`: for a transaction that
 *   writes its events in several statements (a voucher round falls back to one savepoint per
 *   member) and queues one job for all of them.
 */

/** The graphile-worker task that fans recorded events out (tasks/fan_out_events.ts). */
export const FAN_OUT_EVENTS = 'fan_out_events';

type EventType = Schemas['EventType'];

export type NewEvent = { organizationId: string; type: EventType; data: Record<string, unknown> };

/** Whom the events may concern: an active subscription of one of the organizations to one of the types. */
export type Listeners = { organizationIds: readonly string[]; types: readonly EventType[] };

/** The fan-out job's graphile-worker priority (lower runs first; 0 by default). */
export type FanOutOptions = { priority?: number };

/**
 * The events of a statement's rows: `rows` yields the columns `organization_id`, `type` and
 * `data` (jsonb), one row per event; answers the CTE `recorded`, the new events' ids.
 */
export const recorded = (db: Db, rows: PendingQuery<Row[]>) => db`
  recorded AS (
    INSERT INTO events (organization_id, type, data)
    SELECT e.organization_id, e.type, e.data FROM (${rows}) e
    RETURNING id
  )`;

/**
 * The fan-out job of the events whose ids `ids` selects (one uuid[] value, NULL for none), queued
 * only when someone listens; one row per job queued.
 */
const fanOut = (db: Db, ids: PendingQuery<Row[]>, listeners: Listeners, { priority = 0 }: FanOutOptions) => db`
  SELECT graphile_worker.add_job(${FAN_OUT_EVENTS}, json_build_object('event_ids', batch.ids), priority => ${priority}::int)
  FROM (${ids}) AS batch(ids)
  WHERE batch.ids IS NOT NULL AND EXISTS (
    SELECT 1 FROM webhook_subscriptions
    WHERE organization_id = ANY(${listeners.organizationIds as string[]}::text[]) AND active
      AND events && ${listeners.types as string[]}::text[])`;

/**
 * The CTEs `recorded` (see `recorded`) and `queued`: the events of `rows` and one fan-out job for
 * all of them when someone listens. `queued` is one row (`jobs`, 0 or 1), and the statement must
 * read it (e.g. `CROSS JOIN queued`): a plain SELECT in a WITH runs only when it is read.
 */
export const recordedAndQueued = (
  db: Db,
  rows: PendingQuery<Row[]>,
  listeners: Listeners,
  options: FanOutOptions = {},
) => db`
  ${recorded(db, rows)}, queued AS (
    SELECT count(*)::int AS jobs FROM (${fanOut(db, db`SELECT array_agg(id) FROM recorded`, listeners, options)}) j
  )`;

/** Queues the fan-out job of events recorded earlier in this transaction (`recorded`), when someone listens. */
export async function queueFanOut(db: Db, eventIds: string[], listeners: Listeners, options: FanOutOptions = {}) {
  if (eventIds.length === 0) return;
  await db`${fanOut(db, db`SELECT ${eventIds}::uuid[]`, listeners, options)}`;
}

/**
 * Writes events into the outbox inside the caller's transaction (pass the transaction as `db`), so
 * an event exists exactly when the change that caused it committed, and queues their fan-out when
 * someone listens: one statement. Answers the events' ids, in the order given.
 */
export async function recordEvents(db: Db, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = db`
    SELECT e.organization_id, e.type, e.data
    FROM jsonb_to_recordset(${db.json(events.map((e) => ({ organization_id: e.organizationId, type: e.type, data: e.data })) as never)})
      AS e(organization_id text, type text, data jsonb)`;
  const listeners = {
    organizationIds: [...new Set(events.map((e) => e.organizationId))],
    types: [...new Set(events.map((e) => e.type))],
  };
  const ids = await db<{ id: string }[]>`
    WITH ${recordedAndQueued(db, rows, listeners)}
    SELECT id FROM recorded CROSS JOIN queued`;
  return ids.map((r) => r.id);
}

export const recordEvent = async (db: Db, event: NewEvent): Promise<string> =>
  firstRow(await recordEvents(db, [event]), 'the id of the recorded event');

/**
 * Fan-out jobs that a killed worker held: graphile-worker leaves a job locked for four hours by a
 * worker that died, and the events of a fan-out held so would get their deliveries only then. A
 * fan-out takes well under a second, so one locked for `stalledSeconds` is freed (as graphile-worker's
 * own forceUnlockWorkers does) and runs again now; a rerun creates only the deliveries that are
 * missing (fanOutEvents is idempotent). Called by tasks/resume-stalled-jobs.ts. Returns the jobs freed.
 */
export async function resumeStalledFanOuts(db: Db, stalledSeconds: number): Promise<number> {
  const freed = await db`
    UPDATE graphile_worker._private_jobs j SET locked_at = NULL, locked_by = NULL, run_at = now()
    FROM graphile_worker._private_tasks t
    WHERE t.id = j.task_id AND t.identifier = ${FAN_OUT_EVENTS}
      AND j.locked_at < now() - make_interval(secs => ${stalledSeconds})`;
  return freed.count;
}
