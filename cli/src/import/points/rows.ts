// `points import`: one input row read into what it asks for (a member, a storecard, a number of
// points), or the reason it cannot be imported. Pure: the live state is looked at later (plan.ts).
import type { SourceRow } from '../parse.js';

/** `add`: the row's points are credited (negative: spent). `set`: the balance becomes the row's points. */
export type PointsMode = 'add' | 'set';

/** One scan moves at most this many points (POST /passes/scan/storecard `points`). */
export const MAX_SCAN_POINTS = 1_000_000;

/** Member identity as the file gives it: a lower-case e-mail or a UUID (lower case). */
export type MemberKey = { email: string } | { uuid: string };

export interface PointsRow {
  /** Position among all rows of the file (0-based); checkpoints cut batches by it. */
  position: number;
  line: number;
  fields: Record<string, unknown>;
  member: MemberKey;
  storecardId: string;
  /** `add`: the amount to credit (negative to spend); `set`: the target balance (≥ 0). */
  points: number;
}

export interface PointsColumns {
  /** Columns that may name the member, first non-empty wins (an e-mail or a UUID). */
  member: string[];
  storecard: string | undefined;
  points: string;
}

const MEMBER_COLUMNS = ['email', 'e-mail', 'member', 'member_id', 'uuid', 'identifier', 'user_identifier'];
const STORECARD_COLUMNS = ['storecard', 'storecard_id'];
const POINTS_COLUMNS = ['points', 'balance'];

/** What `--map field=column` can name in a points import. */
export const POINTS_FIELDS = ['member', 'storecard', 'points'] as const;
export type PointsMapping = Partial<Record<(typeof POINTS_FIELDS)[number], string>>;

/**
 * Which columns hold what: the column `--map` names for a field, else by header name
 * (case-insensitive). A missing one, or a mapped column the input does not have, is a usage
 * problem, as a message.
 */
export function pointsColumns(
  columns: readonly string[],
  defaultStorecard: string | undefined,
  mapping: PointsMapping = {},
): PointsColumns | { problem: string } {
  const absent = POINTS_FIELDS.find((field) => mapping[field] !== undefined && !columns.includes(mapping[field]));
  if (absent)
    return {
      problem: `--map ${absent}=${mapping[absent]}: the input has no column "${mapping[absent]}" (its columns: ${columns.join(', ')})`,
    };
  const find = (names: readonly string[]) => columns.filter((c) => names.includes(c.trim().toLowerCase()));
  const member = mapping.member !== undefined ? [mapping.member] : find(MEMBER_COLUMNS);
  const [storecard] = mapping.storecard !== undefined ? [mapping.storecard] : find(STORECARD_COLUMNS);
  const [points] = mapping.points !== undefined ? [mapping.points] : find(POINTS_COLUMNS);
  if (member.length === 0)
    return {
      problem: `no member column: name one ${MEMBER_COLUMNS.join(', ')} (an e-mail address or a member UUID), or pass --map member=<column>`,
    };
  if (!points)
    return { problem: `no points column: name one ${POINTS_COLUMNS.join(' or ')}, or pass --map points=<column>` };
  if (!storecard && !defaultStorecard)
    return {
      problem: `no storecard column (${STORECARD_COLUMNS.join(' or ')}, or --map storecard=<column>) and no --storecard <id>`,
    };
  return { member, storecard, points };
}

// Deliberately loose, like the API's own check: something@something.something, no spaces.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const INTEGER = /^[+-]?\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const cell = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value.trim() : String(value);

export type RowVerdict = { ok: true; row: PointsRow } | { ok: false; error: string };

/** One row on its own; duplicates and unknown members are judged across rows later. */
export function readPointsRow(
  row: SourceRow,
  position: number,
  columns: PointsColumns,
  options: { mode: PointsMode; defaultStorecard?: string | undefined },
): RowVerdict {
  if (row.error) return { ok: false, error: row.error };
  const named = columns.member.map((c) => cell(row.fields[c])).find((v) => v !== '');
  if (!named) return { ok: false, error: `no member: ${columns.member.join(' / ')} is empty` };
  let member: MemberKey;
  if (named.includes('@')) {
    if (!EMAIL.test(named) || named.length > 191) return { ok: false, error: `"${named}" is not an e-mail address` };
    member = { email: named.toLowerCase() };
  } else if (UUID.test(named)) {
    member = { uuid: named.toLowerCase() };
  } else {
    return { ok: false, error: `"${named}" is neither an e-mail address nor a member UUID` };
  }
  const storecardId = (columns.storecard && cell(row.fields[columns.storecard])) || options.defaultStorecard;
  if (!storecardId)
    return { ok: false, error: 'no storecard: the storecard cell is empty and no --storecard was given' };
  const text = cell(row.fields[columns.points]);
  if (!INTEGER.test(text)) return { ok: false, error: `points must be a whole number (got "${text}")` };
  const points = Number(text);
  if (!Number.isSafeInteger(points)) return { ok: false, error: `points ${text} is out of range` };
  if (options.mode === 'set' && points < 0)
    return { ok: false, error: `a balance to set cannot be negative (got ${text})` };
  return { ok: true, row: { position, line: row.line, fields: row.fields, member, storecardId, points } };
}

export const memberText = (member: MemberKey): string => ('email' in member ? member.email : member.uuid);
