// `points import`: one row sent, in as many scans as its amount needs, each with the reference
// derived from the file and the row.
import type { PointsApi } from './api.js';
import { scansFor, transactionReference, type FileIdentity, type ResolvedRow, type RowAction } from './plan.js';
import type { PointsMode } from './rows.js';

/** A row and what the plan decided for it. */
export interface Planned extends ResolvedRow {
  action: RowAction;
  delta: number;
  /** With --set: the balance the delta was computed from (0 without a pass). */
  from: number | null;
}

export interface SendRequest {
  api: PointsApi;
  mode: PointsMode;
  signal: AbortSignal;
}

/**
 * One row: its pass issued when it has none, then the scans that move its points. With --set the
 * pass's balance after the scans is compared with the target: when a till scan moved it meanwhile,
 * the difference is sent again (a new reference, since it starts from another balance).
 */
export async function sendRow(request: SendRequest, file: FileIdentity, p: Planned): Promise<RowAction> {
  const { signal, api } = request;
  const passCode = p.passCode ?? (await api.issuePass(p.uuid, p.row.storecardId, signal));
  let changed = false;
  let delta = p.delta;
  let from = p.from;
  for (let round = 0; round < 3 && delta !== 0; round += 1) {
    let balance: number | undefined;
    for (const scan of scansFor(delta, (piece) => transactionReference(file, p.row, from, piece))) {
      const answer = await api.scan(passCode, scan, signal);
      changed ||= answer.created;
      balance = answer.balance;
    }
    if (request.mode !== 'set' || balance === undefined || balance === p.row.points) break;
    from = balance;
    delta = p.row.points - balance;
  }
  if (p.action === 'created') return 'created';
  return changed ? 'adjusted' : 'unchanged';
}

export const passKey = (r: ResolvedRow): string => `${r.uuid}\n${r.row.storecardId}`;
