// `points import`: the live state the plan is made against, read before anything is sent: the
// brand's members (1,000 a request), each storecard's passes (one request), and with --set the
// balance of every pass a row names (one request each, a few at a time).
import { InterruptedError } from '../../errors.js';
import type { PointsApi } from './api.js';
import type { LiveState, ResolvedRow } from './plan.js';
import type { PointsRow } from './rows.js';

export interface LiveRequest {
  api: PointsApi;
  signal: AbortSignal;
  concurrency: number;
}

/** The brand's members and their passes of the storecards the rows name. */
export async function liveState(request: LiveRequest, rows: readonly PointsRow[]): Promise<LiveState> {
  const members = await request.api.members(request.signal);
  const uuidByEmail = new Map(members.map((m) => [m.email.toLowerCase(), m.uuid.toLowerCase()]));
  const uuids = new Set(members.map((m) => m.uuid.toLowerCase()));
  const passes = new Map<string, Map<string, string>>();
  for (const storecardId of new Set(rows.map((r) => r.storecardId))) {
    const byEmail = await request.api.passes(storecardId, request.signal);
    const byUuid = new Map<string, string>();
    for (const [email, code] of byEmail) {
      const uuid = uuidByEmail.get(email.toLowerCase());
      if (uuid) byUuid.set(uuid, code);
    }
    passes.set(storecardId, byUuid);
  }
  return { uuidByEmail, uuids, passes };
}

/** --set: the balance of every pass a row names, a few requests at a time. */
export async function balancesOf(request: LiveRequest, rows: readonly ResolvedRow[]): Promise<Map<string, number>> {
  const balances = new Map<string, number>();
  const withPass = rows.filter((r) => r.passCode !== undefined);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < withPass.length && !request.signal.aborted) {
      const r = withPass[next++];
      if (r?.passCode) balances.set(r.passCode, await request.api.balance(r.uuid, r.passCode, request.signal));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, request.concurrency) }, worker));
  if (request.signal.aborted)
    throw new InterruptedError('Points import interrupted while reading balances; nothing was sent.');
  return balances;
}
