import { appOf } from '../context.js';
import type { RouteDef } from './types.js';

/** Longest the readiness check waits for the database: a probe must answer quickly, even when PostgreSQL hangs. */
const READINESS_TIMEOUT_MS = 2000;

/** Whether the database answers `SELECT 1` within the readiness timeout. */
async function databaseAnswers(request: Parameters<RouteDef['handler']>[0]): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), READINESS_TIMEOUT_MS)));
  const query = appOf(request).sql`SELECT 1`.then(() => true, () => false);
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: RouteDef[] = [
  // Liveness: the process is up and accepts requests, whatever the state of the database.
  { method: 'GET', path: '/health', handler: () => ({ status: 'ok' }) },
  {
    // Readiness: the server can serve requests now; 503 names the part that is down.
    method: 'GET',
    path: '/health/ready',
    handler: async (request, h) => {
      if (await databaseAnswers(request)) return { status: 'ok', checks: { database: 'ok' } };
      return h
        .response({
          message: 'Not ready: the database is unavailable.',
          error: 'not_ready',
          status: 'unavailable',
          checks: { database: 'down' },
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
