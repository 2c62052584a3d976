import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, TEST_SECRET_KEY, type TestServer } from '#test-helpers/server.js';
import { startReceiver, subscribeWebhook, type Receiver } from '#test-helpers/webhook-receiver.js';
import { createWebhookClient } from '../../lib/safe-fetch.js';
import { createSecretBox, SecretKeyError, type SecretBox } from '../../lib/secret-box.js';
import { newWebhookSecret } from '@loyalty/sdk/signing';
import { fanOutEvents, runDeliveryLane } from './deliveries.js';
import { recordEvents } from './events.js';
import { sealWebhookSecrets } from './webhook-subscriptions.js';

/** Webhook secrets at rest (issue 11): sealed in the database, plaintext only in the API's answers and signatures. */

let t: TestServer;
let receiver: Receiver;
let base: string;
let received = 0;
const box = createSecretBox({ key: TEST_SECRET_KEY });

beforeAll(async () => {
  t = await createTestServer();
  receiver = await startReceiver((req, res) => {
    received++;
    req.resume().on('end', () => res.writeHead(204).end());
  });
  base = receiver.base;
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const subscribe = () => subscribeWebhook(t, `${base}/hook`);
const stored = async (id: string) =>
  (
    await t.db.sql<
      { secret: string; previous_secret: string | null }[]
    >`SELECT secret, previous_secret FROM webhook_subscriptions WHERE id = ${id}`
  )[0]!;

describe('webhook secrets at rest', () => {
  it('stores a new subscription secret sealed: no whsec_ text in the column, the API still answers the plaintext once', async () => {
    const sub = await subscribe();
    expect(sub.secret).toMatch(/^whsec_/);
    const row = await stored(sub.id);
    expect(row.secret).not.toContain('whsec_');
    expect(row.secret.startsWith(box.currentPrefix())).toBe(true);
    expect(box.open(row.secret)).toBe(sub.secret);
  });

  it('stores both secrets of a rotation sealed', async () => {
    const sub = await subscribe();
    const res = await t.inject({
      method: 'POST',
      url: `/webhook-subscriptions/${sub.id}/rotate-secret`,
      headers: await t.auth('acme-admin'),
    });
    expect(res.statusCode, res.payload).toBe(200);
    const next = (res.result as { data: { secret: string } }).data.secret;
    const row = await stored(sub.id);
    expect(`${row.secret} ${row.previous_secret}`).not.toContain('whsec_');
    expect([box.open(row.secret), box.open(row.previous_secret!)]).toEqual([next, sub.secret]);
  });

  it('at start-up seals plaintext secrets of older databases and those of the previous key; a second run has nothing to do', async () => {
    const [plain, plainAlone, previous] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    const oldBox = createSecretBox({ key: 'the key before' });
    const [row, alone] = await t.db.sql<{ id: string }[]>`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret, previous_secret, previous_secret_expires_at)
      VALUES ('org-acme', ${`${base}/old`}, '{member.created}', ${plain}, ${oldBox.seal(previous)}, now() + interval '1 hour'),
             ('org-acme', ${`${base}/older`}, '{member.created}', ${plainAlone}, NULL, NULL)
      RETURNING id`;
    const rotated = createSecretBox({ key: TEST_SECRET_KEY, previous: 'the key before' });
    expect(await sealWebhookSecrets(t.db.sql, rotated)).toBe(2);
    const sealed = await stored(row!.id);
    expect(sealed.secret.startsWith(box.currentPrefix())).toBe(true);
    expect(sealed.previous_secret!.startsWith(box.currentPrefix())).toBe(true);
    expect([box.open(sealed.secret), box.open(sealed.previous_secret!)]).toEqual([plain, previous]);
    const sealedAlone = await stored(alone!.id);
    expect([box.open(sealedAlone.secret), sealedAlone.previous_secret]).toEqual([plainAlone, null]);
    expect(await sealWebhookSecrets(t.db.sql, rotated)).toBe(0);
    expect(await stored(row!.id)).toEqual(sealed);
  });

  it('refuses to start with a key that opens none of the stored secrets, naming the variable', async () => {
    await subscribe();
    const wrong = createSecretBox({ key: 'somebody else’s key' });
    await expect(sealWebhookSecrets(t.db.sql, wrong)).rejects.toThrow(SecretKeyError);
    await expect(sealWebhookSecrets(t.db.sql, wrong)).rejects.toThrow(/LOYALTY_SECRET_KEY/);
  });

  it('does not send a delivery signed with garbage when the key is wrong: the attempt fails with the key error', async () => {
    const sub = await subscribe();
    const [eventId] = await t.db.sql.begin((tx) =>
      recordEvents(tx, [
        {
          organizationId: 'org-acme',
          type: 'member.created',
          data: { member_id: crypto.randomUUID(), brand_id: 'brand-acme' },
        },
      ]),
    );
    await fanOutEvents(t.db.sql, [eventId!]);
    const client = createWebhookClient({ timeoutMs: 2000, allowInsecure: true });
    const lane = (secrets: SecretBox) =>
      runDeliveryLane(
        { sql: t.db.sql, client, retryDelays: [1, 1, 1, 1, 1, 1, 1], secrets, timeoutMs: 2000, lanes: 1 },
        sub.id,
        0,
      );
    try {
      const before = received;
      await expect(lane(createSecretBox({ key: 'wrong' }))).rejects.toThrow(SecretKeyError);
      expect(received).toBe(before);
      expect(await lane(box)).toEqual(['delivered']); // the failed try gave the delivery back at once
      expect(received).toBe(before + 1);
    } finally {
      await client.close();
    }
  });
});
