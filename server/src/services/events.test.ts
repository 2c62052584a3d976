import { describe, expect, expectTypeOf, it } from 'vitest';
import { deref, loadOpenApi } from '../lib/openapi.js';
import type { Schemas } from '../lib/schemas.js';
import { eventTypesOf, type EventType } from './events.js';

describe('event types', () => {
  const { document } = loadOpenApi();

  it('are the keys of the webhooks section, the same list as the EventType schema', () => {
    const schema = deref<{ enum: string[] }>(document, { $ref: '#/components/schemas/EventType' });
    expect(eventTypesOf(document)).toEqual(schema.enum);
    expect(eventTypesOf(document)).toContain('points.changed');
  });

  it('are typed as the generated EventType schema', () => {
    expectTypeOf<EventType>().toEqualTypeOf<Schemas['EventType']>();
  });
});
