import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import { appOf } from '../context.js';
import type { Tx } from '../db/pool.js';

/**
 * Runs a route's action in one database transaction and answers with its result. The
 * idempotency plugin hooks in here: when the request carries an Idempotency-Key, the response
 * is stored in this same transaction, so a crash can never leave the action done but unrecorded.
 */
export async function respondInTransaction(
  request: Request,
  h: ResponseToolkit,
  action: (tx: Tx) => Promise<{ status?: number; body: unknown }>,
): Promise<ResponseObject> {
  const { sql } = appOf(request);
  const result = await sql.begin(async (tx) => {
    const out = await action(tx);
    const status = out.status ?? 200;
    const store = (
      request.plugins as {
        idempotency?: { storeInTransaction?: (tx: Tx, status: number, body: unknown) => Promise<void> };
      }
    ).idempotency?.storeInTransaction;
    if (store && status >= 200 && status < 300) await store(tx, status, out.body);
    return { status, body: out.body };
  });
  return h.response(result.body as object).code(result.status);
}
