import type { Db } from '../../db/pool.js';
import { defined } from '../../lib/defined.js';
import type { Schemas } from '../../lib/schemas.js';
import { DomainError, invalidField } from '../platform/errors.js';
import { recordEvents } from '../webhooks/events.js';
import { findPass } from './passes-scan.js';
import { pushedAfter } from '../wallet/wallet-pushes.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

export type StorecardScanInput = {
  pass_code: string;
  brand_id?: string;
  type: 'earn' | 'spend' | 'reverse';
  points?: number;
  transaction_reference: string;
  reverses?: string;
};

type StorecardScanResponse = Schemas['StorecardTransactionResponse'];

type TransactionRow = {
  id: string;
  transaction_reference: string;
  type: 'earn' | 'spend' | 'reverse';
  points: number;
  pass_points: number;
  pass_balance: number;
  created_at: Date;
  reverses_id: string | null;
};

const insufficient = () =>
  new DomainError('unprocessable', 'insufficient_balance', 'The balance of this storecard pass is too low.');

/**
 * POST /passes/scan/storecard. `points` on the pass counts points earned (a reversed earn takes
 * them back), `balance` is what can be spent; neither goes below zero.
 *
 * Consistency: the pass row is locked first (FOR UPDATE), so scans of one pass run one after the
 * other and each sees the totals the previous one left. Idempotency: the transaction row goes in
 * with ON CONFLICT (pass_id, transaction_reference) DO NOTHING; when the reference exists, the
 * first transaction is answered (with the balance it left; `pass` shows the pass now) and nothing
 * changes, even when the repeated request would now fail (say, the balance has been spent since).
 */
export async function scanStorecard(
  tx: Db,
  scope: OrganizationScope,
  input: StorecardScanInput,
): Promise<{ status: 200 | 201; body: StorecardScanResponse }> {
  const pass = await findPass(tx, scope, input.pass_code, input.brand_id, { lock: true });
  if (pass.kind !== 'storecard')
    throw new DomainError(
      'unprocessable',
      'not_a_storecard_pass',
      'This pass is not a storecard pass; use POST /passes/scan.',
    );

  const replay = async (): Promise<{ status: 200; body: StorecardScanResponse } | null> => {
    const [first] = await tx<TransactionRow[]>`
      SELECT * FROM storecard_transactions WHERE pass_id = ${pass.id} AND transaction_reference = ${input.transaction_reference}`;
    return first
      ? {
          status: 200,
          body: respond(false, first, { pass_code: pass.pass_code, points: pass.points, balance: pass.balance }),
        }
      : null;
  };

  let amount: number;
  let reversed: TransactionRow | undefined;
  let points = pass.points;
  let balance = pass.balance;
  try {
    if (input.type === 'reverse') {
      if (!input.reverses) throw invalidField('reverses', 'The reverses field is required when type is reverse.');
      [reversed] = await tx<TransactionRow[]>`
        SELECT * FROM storecard_transactions WHERE pass_id = ${pass.id} AND transaction_reference = ${input.reverses}`;
      if (!reversed)
        throw invalidField(
          'reverses',
          'The selected reverses is invalid: no transaction of this pass has that reference.',
        );
      if (reversed.type === 'reverse') throw invalidField('reverses', 'A reversal cannot be reversed.');
      const [done] = await tx`SELECT 1 FROM storecard_transactions WHERE reverses_id = ${reversed.id}`;
      if (done)
        throw new DomainError('unprocessable', 'already_reversed', 'This transaction has already been reversed.');
      amount = reversed.points;
      if (reversed.type === 'earn') {
        points -= amount;
        balance -= amount;
      } else {
        balance += amount;
      }
    } else {
      if (!input.points) throw invalidField('points', `The points field is required when type is ${input.type}.`);
      amount = input.points;
      if (input.type === 'earn') {
        points += amount;
        balance += amount;
      } else {
        balance -= amount;
      }
    }
    if (balance < 0 || points < 0) throw insufficient();
    if (pass.expired) throw new DomainError('unprocessable', 'pass_expired', 'This storecard pass has expired.');
  } catch (error) {
    // A repeated reference answers its first result even when the request would fail now.
    const first = await replay();
    if (first) return first;
    throw error;
  }

  const [row] = await tx<TransactionRow[]>`
    INSERT INTO storecard_transactions
      (organization_id, pass_id, transaction_reference, type, points, reverses_id, pass_points, pass_balance)
    VALUES (${pass.organization_id}, ${pass.id}, ${input.transaction_reference}, ${input.type}, ${amount},
            ${reversed?.id ?? null}, ${points}, ${balance})
    ON CONFLICT ON CONSTRAINT storecard_transactions_reference_key DO NOTHING
    RETURNING *`;
  if (!row) return defined(await replay(), 'the transaction that holds this reference');
  // The wallet shows points and balance: its devices are told, with this change (none: no job).
  await tx`
    WITH updated AS (
      UPDATE passes SET points = ${points}, balance = ${balance}, updated_at = now() WHERE id = ${pass.id} RETURNING id
    ), ${pushedAfter(tx, 'updated')}
    SELECT jobs FROM pushed`;
  await recordEvents(tx, [
    {
      organizationId: pass.organization_id,
      type: 'points.changed',
      data: {
        member_id: pass.member_id,
        brand_id: pass.brand_id,
        storecard_id: pass.storecard_id,
        pass_id: pass.id,
        type: input.type,
        points: amount,
        balance,
        reference: input.transaction_reference,
      },
    },
  ]);
  return { status: 201, body: respond(true, row, { pass_code: pass.pass_code, points, balance }) };
}

/** The transaction as it was recorded (balance after it) and the pass as it is now. */
function respond(created: boolean, row: TransactionRow, pass: StorecardScanResponse['pass']): StorecardScanResponse {
  return {
    success: true,
    created,
    transaction: {
      reference: row.transaction_reference,
      type: row.type,
      points: row.points,
      balance: row.pass_balance,
      created_at: row.created_at.toISOString(),
    },
    pass,
  };
}
