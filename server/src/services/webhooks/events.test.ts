import { describe, expect, expectTypeOf, it } from 'vitest';
import type { webhooks } from '@loyalty/sdk/generated';
import { loadOpenApi } from '../../lib/openapi.js';
import { eventTypesOf, type EventType } from './events.js';

describe('event types', () => {
  const { document } = loadOpenApi();

  it('are the keys of the webhooks section but ping, in the same order', () => {
    const keys = Object.keys((document as unknown as { webhooks: Record<string, unknown> }).webhooks);
    expect(keys).toContain('ping');
    expect(eventTypesOf(document)).toEqual(keys.filter((k) => k !== 'ping'));
    expect(eventTypesOf(document)).toContain('webhook_subscription.disabled');
  });

  it("are every one accepted by GET /events' types filter, alone and together", () => {
    const path = (document as unknown as { paths: Record<string, { get: { parameters: unknown[] } }> }).paths[
      '/events'
    ];
    const types = path?.get.parameters.find((p) => (p as { name?: string }).name === 'types') as {
      schema: { pattern: string };
    };
    const pattern = new RegExp(types.schema.pattern);
    for (const type of eventTypesOf(document)) expect(pattern.test(type), type).toBe(true);
    expect(pattern.test(eventTypesOf(document).join(','))).toBe(true);
    expect(pattern.test('ping')).toBe(false);
  });

  it('are typed as the generated webhooks section without ping', () => {
    expectTypeOf<EventType>().toEqualTypeOf<Exclude<keyof webhooks, 'ping'>>();
  });
});
