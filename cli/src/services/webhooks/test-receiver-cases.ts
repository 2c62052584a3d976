// The deliveries `loyalty webhooks test-receiver` sends, signed by the server's own signer with both
// header schemes as the server sends them, and what a correct receiver answers to each.
import { randomUUID } from 'node:crypto';
import { newWebhookSecret, signDelivery } from '@loyalty/sdk/signing';
import type { WebhookEvent } from '@loyalty/sdk/webhooks';

export type CaseName =
  | 'valid'
  | 'tampered_body'
  | 'wrong_secret'
  | 'stale_timestamp'
  | 'missing_signature'
  | 'rotation'
  | 'duplicate';

/** One POST: the exact body bytes and every header. */
export interface Delivery {
  body: string;
  headers: Record<string, string>;
}

export interface ReceiverCase {
  name: CaseName;
  description: string;
  /** 2xx: acknowledged; 4xx: refused for good (408 and 429 are retried by the server, so they do not count). */
  expected: '2xx' | '4xx';
  /** Sent in order; the answer to the last one is the case's answer, earlier ones must be 2xx. */
  deliveries: Delivery[];
  /** Why a wrong answer matters and what to change, for a status that is not the expected one. */
  hint: string;
}

/** The age of the stale delivery: twice the 5-minute tolerance receivers apply, so a little clock skew does not matter. */
export const STALE_SECONDS = 600;

export const VALID_HINT =
  "It refused a correctly signed delivery: verify the raw body bytes with the whole whsec_ secret (capture one and run `loyalty webhooks verify --explain`), or the secret given here is not the receiver's.";

type MemberCreated = Extract<WebhookEvent, { type: 'member.created' }>;

/** A member.created event as the server writes it (JSON.stringify of the envelope), with made-up UUIDs. */
function memberCreated(organizationId: string, brandId: string, now: Date): { id: string; body: string } {
  const event: MemberCreated = {
    id: randomUUID(),
    type: 'member.created',
    created_at: now.toISOString(),
    organization_id: organizationId,
    data: { member_id: randomUUID(), brand_id: brandId },
  };
  return { id: event.id, body: JSON.stringify(event) };
}

/** The headers of one attempt, as server/src/services/webhooks/deliveries.ts sendAttempt sends them. */
function signed(
  body: string,
  id: string,
  secrets: string[],
  timestamp: number,
  attempt: number,
  userAgent: string,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': userAgent,
    ...signDelivery(body, id, timestamp, secrets),
    'Loyalty-Message-Id': id,
    'Loyalty-Event': 'member.created',
    'Loyalty-Attempt': String(attempt),
  };
}

export function receiverCases(secret: string, now: Date, userAgent: string): ReceiverCase[] {
  const organizationId = randomUUID();
  const brandId = randomUUID();
  const seconds = Math.floor(now.getTime() / 1000);
  const event = () => memberCreated(organizationId, brandId, now);
  const sign = (e: { id: string; body: string }, secrets = [secret], timestamp = seconds, attempt = 1) => ({
    body: e.body,
    headers: signed(e.body, e.id, secrets, timestamp, attempt, userAgent),
  });
  const valid = event();
  const tampered = event();
  const missing = sign(event());
  delete missing.headers['Loyalty-Signature'];
  delete missing.headers['webhook-signature'];
  const duplicate = event();
  return [
    {
      name: 'valid',
      description: 'a correctly signed delivery',
      expected: '2xx',
      deliveries: [sign(valid)],
      hint: VALID_HINT,
    },
    {
      name: 'tampered_body',
      description: 'the body changed after signing',
      expected: '4xx',
      deliveries: [
        {
          ...sign(tampered),
          body: tampered.body.replace(/"member_id":"[^"]+"/, `"member_id":"${randomUUID()}"`),
        },
      ],
      hint: 'It accepted a body that was changed after signing: verify the signature against the raw body before using it.',
    },
    {
      name: 'wrong_secret',
      description: 'signed with another secret',
      expected: '4xx',
      deliveries: [sign(event(), [newWebhookSecret()])],
      hint: 'It accepted a delivery signed with another secret: it does not check the signature (or not against its own secret).',
    },
    {
      name: 'stale_timestamp',
      description: `webhook-timestamp ${STALE_SECONDS / 60} minutes old`,
      expected: '4xx',
      deliveries: [sign(event(), [secret], seconds - STALE_SECONDS)],
      hint: 'It accepted a delivery signed 10 minutes ago: reject a webhook-timestamp more than 5 minutes from now (a replay).',
    },
    {
      name: 'missing_signature',
      description: 'no Loyalty-Signature, no webhook-signature',
      expected: '4xx',
      deliveries: [missing],
      hint: 'It accepted a delivery without signature headers: refuse it when they are missing.',
    },
    {
      name: 'rotation',
      description: 'two signatures, a wrong one first',
      expected: '2xx',
      deliveries: [sign(event(), [newWebhookSecret(), secret])],
      hint: 'During a secret rotation each signature header carries one space-separated entry per secret: accept when any entry matches, not only the first.',
    },
    {
      name: 'duplicate',
      description: 'the same webhook-id again (a retry)',
      expected: '2xx',
      deliveries: [sign(duplicate), sign(duplicate, [secret], seconds, 2)],
      hint: 'A retry of a delivery already received must be acknowledged (2xx), or the server keeps retrying it: de-duplicate on webhook-id (the event id) and answer 2xx.',
    },
  ];
}
