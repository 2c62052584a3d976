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

// The outbox writes events: its row-wise door, re-exported here for the writers that import it
// from this file (the rule itself, and its SQL, live in outbox.ts only).
export { type NewEvent, recordEvent, recordEvents } from '../platform/outbox.js';
