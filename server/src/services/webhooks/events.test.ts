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

  it('are typed as the generated webhooks section without ping', () => {
    expectTypeOf<EventType>().toEqualTypeOf<Exclude<keyof webhooks, 'ping'>>();
  });
});
