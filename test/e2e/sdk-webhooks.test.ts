// End to end: real deliveries from the reference server to a node:http receiver on 127.0.0.1,
// verified with the built `@loyalty/sdk/webhooks` (as a receiver would), and the typed errors a
// changed body, a wrong secret or the usual mistakes give.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLoyaltyClient, unwrap, type LoyaltyClient } from '@loyalty/sdk';
import {
  constructEvent,
  verifySignature,
  verifyStandardWebhook,
  WebhookVerificationError,
  type WebhookEvent,
} from '@loyalty/sdk/webhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startLiveServer, type LiveServer } from '#test-helpers/live-server.js';

type Delivery = {
  method: string;
  path: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
  answered: number;
  reason?: string;
  event?: WebhookEvent;
};

let live: LiveServer;
let client: LoyaltyClient;
let receiverUrl: string;
let closeReceiver: () => Promise<void>;
const deliveries: Delivery[] = [];
/** The secrets the receiver verifies with, as an integrator's handler would. */
let receiverSecrets: string[] = [];

beforeAll(async () => {
  live = await startLiveServer();
  client = createLoyaltyClient({
    baseUrl: live.url,
    clientCredentials: { clientId: 'acme-admin', clientSecret: 'acme-admin-secret' },
  });
  // The receiver of docs/sdk.md: raw bytes in, constructEvent, 204 or 400 with the reason.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        const delivery: Delivery = {
          method: req.method!,
          path: req.url!,
          body: Buffer.concat(chunks),
          headers: req.headers,
          answered: 204,
        };
        try {
          delivery.event = constructEvent(delivery.body, req.headers, receiverSecrets);
          res.writeHead(204).end();
        } catch (err) {
          if (!(err instanceof WebhookVerificationError)) throw err;
          delivery.answered = 400;
          delivery.reason = err.reason;
          res.writeHead(400).end(err.reason);
        }
        deliveries.push(delivery);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  closeReceiver = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(async () => {
  await closeReceiver?.();
  await live?.close();
});

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const deliveryOf = (memberId: string, answered?: number) =>
  until(`the delivery of member ${memberId}`, () =>
    deliveries.find((d) => d.body.includes(memberId) && (answered === undefined || d.answered === answered)),
  );

async function createMember(email: string): Promise<string> {
  return unwrap(await client.POST('/members', { body: { brand_id: 'brand-acme', email, unsubscribed: false } }))
    .member_id;
}

/** The reason a verification fails with (it must fail). */
function reasonOf(verify: () => unknown): string {
  try {
    verify();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
  throw new Error('verification passed');
}

let subscriptionId: string;
let secret: string;

it('verifies a real member.created delivery and gives the typed event; a changed body or a wrong secret is signature_mismatch', async () => {
  const created = await client.POST('/webhook-subscriptions', {
    body: { url: receiverUrl, events: ['member.created'] },
  });
  expect(created.response.status).toBe(201);
  const subscription = unwrap(created).data;
  subscriptionId = subscription.id;
  secret = subscription.secret;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  receiverSecrets = [secret];
  const [row] = await live.db.sql`SELECT url, events FROM webhook_subscriptions WHERE id = ${subscriptionId}`;
  expect(row).toEqual({ url: receiverUrl, events: ['member.created'] });

  const memberId = await createMember('hooked@example.org');
  const delivery = await deliveryOf(memberId);
  expect(delivery).toMatchObject({ method: 'POST', path: '/hook', answered: 204 });
  expect(delivery.headers['content-type']).toMatch(/^application\/json/);
  const { body, headers } = delivery;

  // The receiver's constructEvent gave the typed event; check it and the stored one agree.
  const event = constructEvent(body, headers, secret);
  expect(event).toEqual(delivery.event);
  expect(event.type).toBe('member.created');
  if (event.type !== 'member.created') throw new Error('unreachable');
  expect(event.data.member_id).toBe(memberId); // typed: MemberCreatedEvent
  expect(event.data.brand_id).toBe('brand-acme');
  expect(event.organization_id).toBe('org-acme');
  expect(headers['webhook-id']).toBe(event.id);
  const [stored] = await live.db.sql`SELECT id::text, type FROM events WHERE data->>'member_id' = ${memberId}`;
  expect(stored).toEqual({ id: event.id, type: 'member.created' });

  // Both signatures, from all headers or the one header; the body as Buffer, string, Uint8Array, ArrayBuffer, and fetch Headers.
  expect(() => verifySignature(body, headers, secret)).not.toThrow();
  expect(() => verifySignature(body, String(headers['loyalty-signature']), secret)).not.toThrow();
  expect(() => verifyStandardWebhook(body, headers, secret)).not.toThrow();
  const fetchHeaders = new Headers(Object.entries(headers).map(([k, v]): [string, string] => [k, String(v)]));
  const arrayBuffer = body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
  for (const raw of [body.toString('utf8'), new Uint8Array(body), arrayBuffer])
    expect(constructEvent(raw, fetchHeaders, secret)).toEqual(event);

  // A changed body: another brand, re-serialized JSON, one newline more.
  const tampered = [
    Buffer.from(body.toString('utf8').replace('"brand-acme"', '"brand-evil"')),
    Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')), null, 2)),
    Buffer.concat([body, Buffer.from('\n')]),
  ];
  for (const changed of tampered) {
    expect(changed.equals(body)).toBe(false);
    expect(reasonOf(() => verifySignature(changed, headers, secret))).toBe('signature_mismatch');
    expect(reasonOf(() => constructEvent(changed, headers, secret))).toBe('signature_mismatch');
  }
  // A wrong secret (well formed, another subscription's).
  const wrong = `whsec_${randomBytes(32).toString('base64')}`;
  expect(reasonOf(() => verifySignature(body, headers, wrong))).toBe('signature_mismatch');
  expect(reasonOf(() => constructEvent(body, headers, wrong))).toBe('signature_mismatch');
  const error = (() => {
    try {
      constructEvent(body, headers, wrong);
    } catch (e) {
      return e as Error;
    }
  })();
  expect(error?.message).toMatch(
    /body is not the exact bytes received .* or the secret is not the one of this subscription/,
  );
});

it('names the usual receiver mistakes: a parsed body, a secret with a newline, a bare secret, missing headers, a replay', async () => {
  const memberId = await createMember('mistakes@example.org');
  const { body, headers } = await deliveryOf(memberId);
  const parsed = JSON.parse(body.toString('utf8')) as unknown;
  expect(reasonOf(() => constructEvent(parsed as string, headers, secret))).toBe('body_not_raw');
  expect(reasonOf(() => verifySignature(parsed as string, headers, secret))).toBe('body_not_raw');
  expect(reasonOf(() => constructEvent(body, headers, `${secret}\n`))).toBe('secret_whitespace');
  expect(reasonOf(() => constructEvent(body, headers, secret.slice('whsec_'.length)))).toBe('secret_format');
  const onlyLoyalty = { 'loyalty-signature': String(headers['loyalty-signature']) };
  expect(reasonOf(() => constructEvent(body, onlyLoyalty, secret))).toBe('missing_header');
  expect(() => verifySignature(body, onlyLoyalty, secret)).not.toThrow();
  expect(reasonOf(() => verifySignature(body, {}, secret))).toBe('missing_header');
  expect(reasonOf(() => verifySignature(body, String(headers['webhook-signature']), secret))).toBe('malformed_header');
  // The same delivery replayed ten minutes later is refused; within the tolerance it is not.
  const later = new Date(Number(headers['webhook-timestamp']) * 1000 + 10 * 60_000);
  expect(reasonOf(() => constructEvent(body, headers, secret, { now: later }))).toBe('stale_timestamp');
  expect(constructEvent(body, headers, secret, { now: later, tolerance: 900 }).type).toBe('member.created');
});

it('a receiver answering 400 (wrong secret) fails the delivery for good; after the fix a manual retry, signed anew, verifies', async () => {
  receiverSecrets = [`whsec_${randomBytes(32).toString('base64')}`]; // a receiver configured with the wrong secret
  const memberId = await createMember('retried@example.org');
  const refused = await deliveryOf(memberId, 400);
  expect(refused.reason).toBe('signature_mismatch');
  const eventId = String(refused.headers['webhook-id']);
  const deliveriesOf = async () =>
    unwrap(
      await client.GET('/webhook-subscriptions/{id}/deliveries', { params: { path: { id: subscriptionId } } }),
    ).data.find((d) => d.event_id === eventId);
  // A 4xx is final (openapi.yaml): the delivery is failed after one attempt, recorded with the receiver's answer.
  const failed = await until('the delivery to be recorded as failed', async () => {
    const d = await deliveriesOf();
    return d?.status === 'failed' ? d : undefined;
  });
  expect(failed.attempts.map((a) => [a.attempt, a.status_code, a.response_snippet])).toEqual([
    [1, 400, 'signature_mismatch'],
  ]);

  receiverSecrets = [secret]; // fixed
  const retried = await client.POST('/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry', {
    params: { path: { id: subscriptionId, delivery_id: failed.id } },
  });
  expect(retried.response.status).toBe(202);
  const accepted = await deliveryOf(memberId, 204);
  expect(accepted.headers['loyalty-attempt']).toBe('2');
  expect(accepted.headers['webhook-id']).toBe(eventId); // the same message: de-duplicate on it
  expect(accepted.body.equals(refused.body)).toBe(true); // identical bytes on every attempt
  expect(accepted.event).toMatchObject({ id: eventId, type: 'member.created', data: { member_id: memberId } });

  const delivered = await until('the delivery to be recorded as delivered', async () => {
    const d = await deliveriesOf();
    return d?.status === 'delivered' ? d : undefined;
  });
  expect(delivered.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
    [1, 400],
    [2, 204],
  ]);
  expect(deliveries.filter((d) => d.body.includes(memberId))).toHaveLength(2);
});

it('during a secret rotation a delivery verifies with the new secret, the old one, or both', async () => {
  const rotated = unwrap(
    await client.POST('/webhook-subscriptions/{id}/rotate-secret', { params: { path: { id: subscriptionId } } }),
  ).data;
  const fresh = rotated.secret;
  expect(fresh).not.toBe(secret);
  receiverSecrets = [fresh];
  const memberId = await createMember('rotated@example.org');
  const { body, headers } = await deliveryOf(memberId, 204);
  expect(String(headers['loyalty-signature']).split(' ')).toHaveLength(2);
  expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
  for (const secrets of [fresh, secret, [fresh, secret]]) {
    expect(() => verifySignature(body, headers, secrets)).not.toThrow();
    expect(constructEvent(body, headers, secrets).type).toBe('member.created');
  }
  const other = `whsec_${randomBytes(32).toString('base64')}`;
  expect(reasonOf(() => constructEvent(body, headers, other))).toBe('signature_mismatch');
  expect(reasonOf(() => verifySignature(body, headers, other))).toBe('signature_mismatch');
});
