import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { TransactionSql } from 'postgres';

/**
 * Runs a route's action in one database transaction and answers with its result. The
 * idempotency plugin hooks in here: when the request carries an Idempotency-Key, the response
 * is stored in this same transaction, so a crash can never leave the action done but unrecorded.
 * The pool is the app's (`server.app`, context.ts) and the hook the plugin's request state
 * (`request.plugins.idempotency`, plugins/idempotency.ts): both typed through hapi's interfaces.
 */
export async function respondInTransaction(
  request: Request,
  h: ResponseToolkit,
  action: (tx: TransactionSql) => Promise<{ status?: number; body: unknown }>,
): Promise<ResponseObject> {
  const { sql } = request.server.app;
  const result = await sql.begin(async (tx) => {
    const out = await action(tx);
    const status = out.status ?? 200;
    const store = request.plugins.idempotency?.storeInTransaction;
    if (store && status >= 200 && status < 300) await store(tx, status, out.body);
    return { status, body: out.body };
  });
  return h.response(result.body as object).code(result.status);
}
