// `points import`: what each row does against the live state (member, pass, balance), and the
// transaction references that make every scan of a row happen once, however often it is sent.
import { createHash } from 'node:crypto';
import { MAX_SCAN_POINTS, memberText, type PointsMode, type PointsRow } from './rows.js';

/** `created`: a storecard pass is issued, then credited; `adjusted`: points sent; `unchanged`: nothing to send. */
export type RowAction = 'created' | 'adjusted' | 'unchanged';

export interface Scan {
  type: 'earn' | 'spend';
  points: number;
  transaction_reference: string;
}

/** What every reference of a run carries: the file's bytes and how they are read. */
export interface FileIdentity {
  sha256: string;
  brandId: string;
  mode: PointsMode;
}

/**
 * The reference of one scan of one row. The server records a reference once per pass, so a rerun
 * or a resumed run that sends the same scan again changes nothing. It is derived from the file
 * (content hash, mode), the row (line, member, storecard, points) and, with --set, the balance the
 * delta was computed from: a rerun after the balance moved (a till scan between two runs) sends a
 * new correction, while a rerun that finds the balance where the first run left it sends nothing.
 * `piece` numbers the scans of a row whose amount is more than one scan may carry.
 */
export function transactionReference(file: FileIdentity, row: PointsRow, from: number | null, piece: number): string {
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        file.sha256,
        file.brandId,
        file.mode,
        row.line,
        memberText(row.member),
        row.storecardId,
        row.points,
        from,
        piece,
      ]),
    )
    .digest('hex');
  return `import-${digest.slice(0, 40)}`;
}

/** The amount a row moves: `add` its points; `set` the difference to the balance now (no pass: 0). */
export function deltaOf(mode: PointsMode, points: number, balance: number | undefined): number {
  return mode === 'add' ? points : points - (balance ?? 0);
}

export function actionOf(delta: number, hasPass: boolean): RowAction {
  if (delta === 0) return 'unchanged';
  return hasPass ? 'adjusted' : 'created';
}

/** The scans that move `delta` points, each at most MAX_SCAN_POINTS. */
export function scansFor(delta: number, reference: (piece: number) => string): Scan[] {
  const type = delta > 0 ? 'earn' : 'spend';
  const scans: Scan[] = [];
  for (let left = Math.abs(delta), piece = 0; left > 0; piece += 1) {
    const points = Math.min(left, MAX_SCAN_POINTS);
    scans.push({ type, points, transaction_reference: reference(piece) });
    left -= points;
  }
  return scans;
}

/** The brand's members and the passes they hold, read from the API before anything is sent. */
export interface LiveState {
  /** Lower-case e-mail → member UUID, for every member of the brand. */
  uuidByEmail: ReadonlyMap<string, string>;
  /** Member UUIDs of the brand. */
  uuids: ReadonlySet<string>;
  /** Storecard id → member UUID → pass code (a member has at most one pass of a storecard). */
  passes: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

export interface ResolvedRow {
  row: PointsRow;
  uuid: string;
  /** The member's pass of the row's storecard, when there is one. */
  passCode: string | undefined;
}

export interface RejectedPointsRow {
  line: number;
  fields: Record<string, unknown>;
  error: string;
}

/**
 * Each row's member found in the brand (a member of another brand or organization is not found), and
 * its pass. With --set a second row for the same member and storecard is refused: two targets for
 * one balance cannot both be met. With --add each row credits its own amount.
 */
export function resolveRows(
  rows: readonly PointsRow[],
  live: LiveState,
  mode: PointsMode,
): { resolved: ResolvedRow[]; rejected: RejectedPointsRow[] } {
  const resolved: ResolvedRow[] = [];
  const rejected: RejectedPointsRow[] = [];
  const firstLine = new Map<string, number>();
  for (const row of rows) {
    const uuid =
      'email' in row.member
        ? live.uuidByEmail.get(row.member.email)
        : live.uuids.has(row.member.uuid)
          ? row.member.uuid
          : undefined;
    if (!uuid) {
      rejected.push({ line: row.line, fields: row.fields, error: `no member ${memberText(row.member)} in this brand` });
      continue;
    }
    const key = `${uuid}\n${row.storecardId}`;
    const earlier = firstLine.get(key);
    if (mode === 'set' && earlier !== undefined) {
      rejected.push({
        line: row.line,
        fields: row.fields,
        error: `line ${earlier} already sets the balance of this member's ${row.storecardId} pass`,
      });
      continue;
    }
    firstLine.set(key, row.line);
    resolved.push({ row, uuid, passCode: live.passes.get(row.storecardId)?.get(uuid) });
  }
  return { resolved, rejected };
}

export interface PlanCounts {
  created: number;
  adjusted: number;
  unchanged: number;
  rejected: number;
}

export const emptyCounts = (): PlanCounts => ({ created: 0, adjusted: 0, unchanged: 0, rejected: 0 });
