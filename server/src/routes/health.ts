import { appOf } from '../context.js';
import type { Schemas } from '../lib/schemas.js';
import type { RouteDef } from './types.js';

/** Longest the readiness check waits for the database: a probe must answer quickly, even when PostgreSQL hangs. */
const READINESS_TIMEOUT_MS = 2000;

type Check = 'ok' | 'down' | 'behind';

/**
 * The database within the readiness timeout: `down` when it does not answer, `behind` when it
 * lacks this version's last migration (a process newer than the schema: start it once alone, or
 * run the migrations), `ok` otherwise. With the migrations in place, `clock` says whether the
 * sandbox clocks can be evaluated: loyalty_now of the organization furthest ahead (real now()
 * outside sandbox mode); a clock no statement can add to now() is `down`, not a 200.
 */
async function databaseState(
  request: Parameters<RouteDef['handler']>[0],
): Promise<{ database: Check; migrations?: Check; clock?: Check }> {
  const { sql, lastMigration } = appOf(request);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>(
    (resolve) => (timer = setTimeout(() => resolve('timeout'), READINESS_TIMEOUT_MS)),
  );
  const query = (
    lastMigration
      ? sql<
          { applied: boolean }[]
        >`SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = ${lastMigration}) AS applied`
      : sql`SELECT 1`
  ).then(
    async (rows) => {
      const clock: Check = await sql`
        SELECT loyalty_now((SELECT organization_id FROM sandbox_clocks ORDER BY offset_seconds DESC LIMIT 1)) AS now`.then(
        () => 'ok',
        () => 'down',
      );
      return { rows, clock };
    },
    () => 'failed' as const,
  );
  try {
    const answer = await Promise.race([query, timeout]);
    if (answer === 'timeout' || answer === 'failed') return { database: 'down' };
    if (!lastMigration) return { database: 'ok' };
    const applied = (answer.rows[0] as { applied: boolean }).applied;
    return applied
      ? { database: 'ok', migrations: 'ok', clock: answer.clock }
      : { database: 'ok', migrations: 'behind' };
  } finally {
    clearTimeout(timer);
  }
}

const NOT_READY: Record<string, string> = {
  database: 'the database is unavailable',
  migrations: 'the database lacks migrations of this version',
  clock: 'the sandbox clock cannot be evaluated',
  worker: 'the worker of this process is not running',
};

export const healthRoutes: RouteDef[] = [
  // Liveness: the process is up and accepts requests, whatever the state of the database.
  { method: 'GET', path: '/health', handler: () => ({ status: 'ok' }) satisfies Schemas['Health'] },
  {
    // Readiness: the server can serve requests now; 503 names the part that is down.
    method: 'GET',
    path: '/health/ready',
    handler: async (request, h) => {
      const health = appOf(request).workerHealth?.();
      const checks: Record<string, Check> = {
        ...(await databaseState(request)),
        ...(health && { worker: health.ok ? 'ok' : 'down' }),
      };
      const failing = Object.keys(checks).filter((part) => checks[part] !== 'ok');
      if (!failing.length) return { status: 'ok', checks };
      return h
        .response({
          message: `Not ready: ${failing.map((part) => NOT_READY[part]).join('; ')}.`,
          error: 'not_ready',
          status: 'unavailable',
          checks,
        })
        .code(503)
        .header('retry-after', '5');
    },
  },
  {
    method: 'GET',
    path: '/openapi.yaml',
    handler: (request, h) => h.response(appOf(request).openapi.yamlText).type('application/yaml; charset=utf-8'),
  },
];
