import type { Db } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';

/** The fault kinds of `Prefer: fault=…`: exactly the vocabulary of `@loyalty/sdk/testing` (MockFault) plus the two transport faults. */
export const FAULT_KINDS = ['rate_limit', 'server_error', 'timeout', 'in_progress', 'network_reset'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export type FaultPreference = {
  kind: FaultKind;
  /** How many requests of the key fail (default 1, 1 to 100). */
  times: number;
  /** rate_limit: the Retry-After seconds (default 1). */
  retryAfter: number;
  /** server_error: the status (500 to 599, default 503). */
  status: number;
  /** timeout: how long the answer is held, in seconds (default 35, past the SDK's 30 s per attempt; at most 120). */
  delaySeconds: number;
  /** The preference as the counter's key sees it: kind and every parameter, sorted. */
  normalized: string;
};

export class FaultPreferenceError extends Error {}

const int = (name: string, value: string | undefined, fallback: number, min: number, max: number): number => {
  if (value === undefined) return fallback;
  if (!/^\d{1,6}$/.test(value) || Number(value) < min || Number(value) > max)
    throw new FaultPreferenceError(`Prefer: fault ${name} must be a whole number from ${min} to ${max}.`);
  return Number(value);
};

/**
 * The `fault` preference of a Prefer header (RFC 7240: preferences separated by commas, each
 * `name[=value]` followed by `;param=value`s; names case-insensitive, values may be quoted).
 * Undefined when there is none; a FaultPreferenceError (answered 400) when it is not understood.
 */
export function parseFaultPreference(header: string | string[] | undefined): FaultPreference | undefined {
  if (header === undefined) return undefined;
  for (const preference of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [head = '', ...rest] = preference.split(';').map((part) => part.trim());
    const [name, value] = splitPair(head);
    if (name !== 'fault') continue;
    if (!FAULT_KINDS.includes(value as FaultKind))
      throw new FaultPreferenceError(`Prefer: fault must be one of ${FAULT_KINDS.join(', ')}.`);
    const params = new Map(rest.filter(Boolean).map(splitPair));
    const known = new Set(['times', 'retry_after', 'status', 'delay', 'id']);
    const unknown = [...params.keys()].filter((k) => !known.has(k));
    if (unknown.length)
      throw new FaultPreferenceError(
        `Prefer: fault does not take ${unknown.join(', ')} (it takes times, retry_after, status, delay and id).`,
      );
    return {
      kind: value as FaultKind,
      times: int('times', params.get('times'), 1, 1, 100),
      retryAfter: int('retry_after', params.get('retry_after'), 1, 0, 3600),
      status: int('status', params.get('status'), 503, 500, 599),
      delaySeconds: int('delay', params.get('delay'), 35, 0, 120),
      normalized: [
        `fault=${value}`,
        ...[...params].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`),
      ].join(';'),
    };
  }
  return undefined;
}

function splitPair(part: string): [string, string | undefined] {
  const at = part.indexOf('=');
  if (at < 0) return [part.toLowerCase(), undefined];
  return [
    part.slice(0, at).trim().toLowerCase(),
    part
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1'),
  ];
}

/**
 * Fault counters one client may hold at once (all its tokens): a new key past it drops the
 * client's least recently used ones, which start again at 1 if they come back.
 */
export const FAULT_KEYS_PER_CLIENT = 100;

/** How long an unused counter lives (it starts again at 1 after that). */
const FAULT_KEY_TTL = '10 minutes';

/**
 * Counts one more request of `key` for `clientId` and returns how many were seen (a key unused for
 * 10 minutes starts at 1 again). A new key also drops the client's expired counters and those
 * past FAULT_KEYS_PER_CLIENT, so the table stays bounded per client (issue 25).
 */
export async function countFaultRequest(db: Db, clientId: string, key: string): Promise<number> {
  const rows = await db<{ seen: number; inserted: boolean }[]>`
    INSERT INTO sandbox_faults AS f (key, client_id, seen, expires_at)
    VALUES (${key}, ${clientId}, 1, now() + ${FAULT_KEY_TTL}::interval)
    ON CONFLICT (key) DO UPDATE SET
      seen = CASE WHEN f.expires_at < now() THEN 1 ELSE f.seen + 1 END,
      expires_at = now() + ${FAULT_KEY_TTL}::interval
    RETURNING seen, (xmax = 0) AS inserted`;
  const row = firstRow(rows, 'the fault counter');
  if (row.inserted)
    await db`
      DELETE FROM sandbox_faults WHERE client_id = ${clientId} AND key <> ${key} AND (expires_at < now() OR key IN (
        SELECT key FROM sandbox_faults WHERE client_id = ${clientId} AND key <> ${key}
        ORDER BY expires_at DESC OFFSET ${FAULT_KEYS_PER_CLIENT - 1}))`;
  return row.seen;
}

/** Drops every expired counter (clients that went quiet); the plugin runs it every 10 minutes. */
export async function purgeFaultCounters(db: Db): Promise<number> {
  return (await db`DELETE FROM sandbox_faults WHERE expires_at < now()`).count;
}
