import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import { deref, type OpenApiDocument } from '../../lib/openapi.js';
import type { Schemas } from '../../lib/schemas.js';

/**
 * An event type one can subscribe to and that GET /events shows: the EventType schema, every key
 * of openapi.yaml's `webhooks` section but `ping` (sent only by the test call, never recorded).
 */
export type EventType = Schemas['EventType'];

/** The recorded event types the loaded document describes, in its order (the EventType schema). */
export const eventTypesOf = (document: OpenApiDocument): EventType[] =>
  deref<{ enum: EventType[] }>(document, { $ref: '#/components/schemas/EventType' }).enum;

export type NewEvent = { organizationId: string; type: EventType; data: Record<string, unknown> };

/**
 * Writes events into the outbox inside the caller's transaction (pass the transaction as `db`),
 * so an event exists exactly when the change that caused it committed. When the organization
 * has an active subscription to any of the types, one `fan_out_events` job is queued in the
 * same transaction (graphile_worker.add_job in SQL) to create and schedule the deliveries.
 * Payloads carry identifiers only: never names or e-mail addresses.
 */
export async function recordEvents(db: Db, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = await db<{ id: string }[]>`
    INSERT INTO events (organization_id, type, data)
    SELECT e.organization_id, e.type, e.data
    FROM jsonb_to_recordset(${db.json(events.map((e) => ({ organization_id: e.organizationId, type: e.type, data: e.data })) as never)})
      AS e(organization_id text, type text, data jsonb)
    RETURNING id`;
  const ids = rows.map((r) => r.id);
  const orgs = [...new Set(events.map((e) => e.organizationId))];
  const types = [...new Set(events.map((e) => e.type))];
  await db`
    SELECT graphile_worker.add_job('fan_out_events', json_build_object('event_ids', ${ids}::uuid[]))
    WHERE EXISTS (
      SELECT 1 FROM webhook_subscriptions
      WHERE organization_id = ANY(${orgs}) AND active AND events && ${types}::text[])`;
  return ids;
}

export const recordEvent = async (db: Db, event: NewEvent): Promise<string> =>
  firstRow(await recordEvents(db, [event]), 'the id of the recorded event');
