import type { Sql } from '../../db/pool.js';
import { listenWaiters } from '../platform/listen-waiters.js';
import { DomainError, invalidField } from '../platform/errors.js';
import { PUSH_CHANNEL, pushTokenKey } from './wallet-pushes.js';

/**
 * GET /sandbox/wallet/pushes: the pushes the sandbox "sent" to one push token, oldest first, after a
 * cursor (the last push's id), long-polling up to `wait` seconds when there is none yet. The push
 * token is the credential (the device chose it and registered it), so a reader sees only the
 * pushes to its own token, of whatever organization's passes it registered.
 */

export type SandboxPush = { id: string; topic: string; sent_at: string };

/**
 * Polls of one caller (its address) woken by pushes at once, per process; past it a poll is held
 * and reads again when its `wait` runs out (as GET /events holds a client's 11th poll).
 */
export const OPEN_PUSH_POLLS_PER_ADDRESS = 20;

const PAGE = 100;
const CURSOR = /^\d{1,19}$/;
const MAX_CURSOR = 9223372036854775807n;

/** The push token of an `Authorization: PushToken <pushToken>` header; 401 for anything else. */
export function pushTokenOf(header: string | undefined): string {
  const token = /^PushToken ([\x21-\x7e]{1,400})$/.exec(header ?? '')?.[1];
  if (!token)
    throw new DomainError(
      'unauthenticated',
      'unauthenticated',
      'The Authorization header must be "PushToken <pushToken>", the push token a device registered.',
    );
  return token;
}

export async function listSandboxPushes(
  sql: Sql,
  pushToken: string,
  query: { after?: string; waitSeconds?: number },
  { signal, pollKey }: { signal?: AbortSignal; pollKey?: string } = {},
): Promise<{ data: SandboxPush[]; next_after: string }> {
  const after = query.after ?? '0';
  if (!CURSOR.test(after) || BigInt(after) > MAX_CURSOR)
    throw invalidField('after', 'The after field must be the id of a push (next_after of an earlier answer), or 0.');
  const key = pushTokenKey(pushToken);
  const deadline = Date.now() + (query.waitSeconds ?? 0) * 1000;
  const poll = query.waitSeconds
    ? listenWaiters(sql, PUSH_CHANNEL, OPEN_PUSH_POLLS_PER_ADDRESS).open(key.toString('hex'), pollKey)
    : undefined;
  try {
    for (;;) {
      // Subscribe before reading, so a push recorded between the read and the wait still wakes us.
      const woken = poll?.next();
      const rows = await sql<{ id: string; topic: string; sent_at: Date }[]>`
        SELECT id::text AS id, topic, sent_at FROM wallet_pushes
        WHERE push_token_hash = ${key} AND id > ${after}::bigint
        ORDER BY id LIMIT ${PAGE}`;
      const remaining = deadline - Date.now();
      if (rows.length || remaining <= 0 || !woken || signal?.aborted) {
        woken?.cancel();
        return {
          data: rows.map((r) => ({ id: r.id, topic: r.topic, sent_at: r.sent_at.toISOString() })),
          next_after: rows.at(-1)?.id ?? after,
        };
      }
      await woken.wait(remaining, signal);
    }
  } finally {
    poll?.close();
  }
}
