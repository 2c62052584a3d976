import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { openDatabase } from './boot.js';
import { loadConfig } from './config.js';
import { createSecretBox, SecretKeyError } from './lib/secret-box.js';
import { newWebhookSecret } from '@loyalty/sdk/signing';

describe('openDatabase with DATABASE_URL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });
  const configFor = (key: string) =>
    loadConfig({ DATABASE_URL: db.url, LOYALTY_SECRET_KEY: key, LOYALTY_FIXTURES: 'none' });

  it('seals the plaintext webhook secrets of an older database with LOYALTY_SECRET_KEY', async () => {
    const secret = newWebhookSecret();
    const [row] = await db.sql<{ id: string }[]>`
      INSERT INTO webhook_subscriptions (organization_id, url, events, secret) VALUES ('org-acme', 'https://example.com/hook', '{member.created}', ${secret}) RETURNING id`;
    const opened = await openDatabase(configFor('the key'), { seed: false });
    await opened.sql.end({ timeout: 1 });
    expect(opened.config.secretKey).toBe('the key');
    const [stored] = await db.sql<{ secret: string }[]>`SELECT secret FROM webhook_subscriptions WHERE id = ${row!.id}`;
    expect(stored!.secret).not.toContain('whsec_');
    expect(createSecretBox({ key: 'the key' }).open(stored!.secret)).toBe(secret);
  });

  it('refuses to start with a key that cannot open the stored secrets', async () => {
    await expect(openDatabase(configFor('another key'), { seed: false })).rejects.toThrow(SecretKeyError);
  });
});

describe('openDatabase with the embedded PostgreSQL', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(path.join(os.tmpdir(), 'loyalty-boot-'));
    await chmod(parent, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
  });
  afterAll(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it('without LOYALTY_SECRET_KEY generates a key into the data directory (0600) and keeps it across starts', async () => {
    const config = loadConfig({ LOYALTY_DATA_DIR: path.join(parent, 'data'), LOYALTY_FIXTURES: 'none' });
    const first = await openDatabase(config, { seed: false });
    await first.sql.end({ timeout: 1 });
    await first.embedded!.stop();
    const file = path.join(parent, 'data', 'loyalty-secret-key');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const key = (await readFile(file, 'utf8')).trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(first.config.secretKey).toBe(key);
    expect(config.secretKey).toBeUndefined();

    const again = await openDatabase(config, { seed: false });
    await again.sql.end({ timeout: 1 });
    await again.embedded!.stop();
    expect(again.config.secretKey).toBe(key);
  }, 120_000);
});
