import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import { outcomeOf, type WebhookClient } from '../../lib/safe-fetch.js';
import type { Schemas } from '../../lib/schemas.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { deliveryHeaders } from './deliveries.js';
import type { OrganizationScope } from '../platform/organization-scope.js';
import { sampleVerdict, type SampleEvent } from './subscription-filter.js';
import { requireSubscription } from './webhook-subscriptions.js';

/**
 * POST /webhook-subscriptions/{id}/test: one signed `ping` to the subscription's URL now, sent
 * and signed like a delivery (the same client, SSRF rules and timeout), and its outcome. Nothing
 * is written: no event, no delivery, no change to the failure counters; a disabled subscription
 * can be tested before it is enabled. With a `sample`: whether an event like it would be
 * delivered, by the fan-out's rule (subscription-filter.ts).
 */
export async function testSubscription(
  db: Db,
  scope: OrganizationScope,
  id: string,
  { client, secrets }: { client: WebhookClient; secrets: SecretBox },
  sample?: SampleEvent,
): Promise<Schemas['WebhookTestResponse']['data']> {
  const subscription = await requireSubscription(db, scope, id);
  const verdict = sample && (await sampleVerdict(db, id, sample));
  const rows = await db<{ secrets: string[] }[]>`
    SELECT array_remove(ARRAY[secret, CASE WHEN previous_secret_expires_at > loyalty_now(organization_id) THEN previous_secret END], NULL) AS secrets
    FROM webhook_subscriptions WHERE id = ${id}`;
  const eventId = randomUUID();
  const attemptedAt = new Date();
  const ping: Schemas['PingEvent'] = {
    id: eventId,
    type: 'ping',
    created_at: attemptedAt.toISOString(),
    organization_id: subscription.organization_id,
    data: { subscription_id: id },
  };
  const body = JSON.stringify(ping);
  const headers = deliveryHeaders({
    body,
    eventId,
    eventType: 'ping',
    attempt: 1,
    attemptedAt,
    secrets: firstRow(rows, 'the subscription secrets').secrets.map(secrets.open),
    requestId: `${eventId}.1`,
  });
  const result = await client.post(subscription.url, body, headers);
  return {
    event_id: eventId,
    outcome: outcomeOf(result) === 'delivered' ? 'delivered' : 'failed',
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
    response_snippet: result.snippet,
    ...(verdict ? { sample: verdict } : {}),
  };
}
