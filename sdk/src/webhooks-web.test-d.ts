import { expectTypeOf, test } from 'vitest';
import { constructEventAsync, verifyAsync, type WebhookEvent } from './webhooks.js';

test('the async forms take the same raw bodies and resolve to the same types', async () => {
  expectTypeOf(constructEventAsync('{}', new Headers(), 'whsec_x')).toEqualTypeOf<Promise<WebhookEvent>>();
  const event = await constructEventAsync(new Uint8Array(), {}, ['whsec_new', 'whsec_old'], { tolerance: 60 });
  if (event.type === 'points.changed') expectTypeOf(event.data.balance).toBeNumber();
  expectTypeOf(verifyAsync(new ArrayBuffer(0), { 'webhook-id': 'x' }, 'whsec_x')).toEqualTypeOf<Promise<void>>();
  await verifyAsync('{}', 'hex-of-loyalty-signature', 'whsec_x');
  // @ts-expect-error a parsed body is not accepted
  await constructEventAsync({ id: 'x' }, {}, 'whsec_x');
  // @ts-expect-error the secret is a string or a list of strings
  await verifyAsync('{}', {}, 42);
});
