import type { Db, Sql } from '../../db/pool.js';
import { firstRow } from '../../lib/defined.js';
import { invalidField } from '../platform/errors.js';
import { recordEvents } from '../webhooks/events.js';
import type { WalletPass } from './wallet-pass.js';
import { pushJobsOf } from './wallet-pushes.js';

/**
 * The devices registered for passes' updates (Apple's web service, migration 0043), and what a
 * device learns from them: which of its passes changed since a tag.
 *
 * Tags (`lastUpdated`, sent back as `passesUpdatedSince`): microseconds since the epoch, as text. A
 * pass's version is the latest of its row's updated_at (every change that shows on it sets it) and
 * the moment its expiry was seen (expiry_noted_at; a pass expired on its organization's clock but
 * not noted yet counts as changed now). A pass counts as updated since a tag when its version is at
 * or after the tag: a pass whose expiration date passed by its organization's clock since the tag
 * is in the answer, even though no row changed (a sandbox clock move, or midnight).
 * The tag handed out is not "now" but the start of the oldest transaction still open on the
 * database (at most now): a change commits with its transaction's start time as updated_at, so a
 * transaction that began before the answer and commits after it is still at or after the tag. The
 * cost is that a pass may be named twice (the device fetches it, gets a 304), never missed.
 */

export type RegistrationInput = {
  deviceLibraryIdentifier: string;
  passTypeIdentifier: string;
  pushToken: string;
};

/** What pass.installed and pass.uninstalled carry: identifiers and a count, never the device or its push token. */
async function registrationEvent(tx: Db, pass: WalletPass, type: 'pass.installed' | 'pass.uninstalled') {
  const row = firstRow(
    await tx<{ member_id: string; devices: number }[]>`
      SELECT p.member_id, (SELECT count(*)::int FROM wallet_registrations r WHERE r.pass_id = p.id) AS devices
      FROM passes p WHERE p.id = ${pass.id}`,
    'the pass of the registration',
  );
  await recordEvents(tx, [
    {
      organizationId: pass.organization_id,
      type,
      data: {
        pass_id: pass.id,
        kind: pass.kind,
        member_id: row.member_id,
        brand_id: pass.brand_id,
        wallet: 'apple',
        device_count: row.devices,
      },
    },
  ]);
}

/**
 * POST /v1/devices/{d}/registrations/{t}/{serial}: registers the device for the pass's updates, or
 * takes its new push token when it is registered already. `created` tells which (201 or 200).
 * pass.installed is recorded with a new registration, in its transaction.
 */
export async function registerDevice(
  sql: Sql,
  pass: WalletPass,
  input: RegistrationInput,
): Promise<{ created: boolean }> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ created: boolean }[]>`
      INSERT INTO wallet_registrations AS r
        (organization_id, device_library_identifier, pass_type_identifier, pass_id, push_token)
      VALUES (${pass.organization_id}, ${input.deviceLibraryIdentifier}, ${input.passTypeIdentifier}, ${pass.id}, ${input.pushToken})
      ON CONFLICT (device_library_identifier, pass_id) DO UPDATE
        SET push_token = excluded.push_token, pass_type_identifier = excluded.pass_type_identifier, updated_at = now()
      RETURNING (xmax = 0) AS created`;
    const created = firstRow(row ? [row] : [], 'the registration').created;
    if (created) await registrationEvent(tx, pass, 'pass.installed');
    return { created };
  });
}

/** DELETE /v1/devices/{d}/registrations/{t}/{serial}: pass.uninstalled when a registration went. */
export async function unregisterDevice(sql: Sql, pass: WalletPass, deviceLibraryIdentifier: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const gone = await tx`
      DELETE FROM wallet_registrations WHERE device_library_identifier = ${deviceLibraryIdentifier} AND pass_id = ${pass.id}`;
    if (gone.count) await registrationEvent(tx, pass, 'pass.uninstalled');
    return gone.count > 0;
  });
}

const TAG = /^\d{1,19}$/;

/**
 * GET /v1/devices/{d}/registrations/{t}?passesUpdatedSince=tag: the serial numbers of the device's
 * passes of this type updated at or after the tag (all of them without one), and the next tag; null
 * when none (204).
 */
export async function passesUpdatedSince(
  db: Db,
  deviceLibraryIdentifier: string,
  passTypeIdentifier: string,
  since: string | undefined,
): Promise<{ serialNumbers: string[]; lastUpdated: string } | null> {
  if (since !== undefined && !TAG.test(since))
    throw invalidField(
      'passesUpdatedSince',
      'The passesUpdatedSince field must be a lastUpdated tag of an earlier answer.',
    );
  const rows = await db<{ pass_id: string | null; tag: string }[]>`
    WITH horizon AS (
      SELECT least(now(), (
        SELECT min(xact_start) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL)) AS at
    ), versions AS (
      SELECT r.pass_id, greatest(p.updated_at, coalesce(r.expiry_noted_at,
               CASE WHEN loyalty_pass_status(p.status, p.expiration_date, p.organization_id) = 'expired' THEN now() END)) AS version
      FROM wallet_registrations r JOIN passes p ON p.id = r.pass_id
      WHERE r.device_library_identifier = ${deviceLibraryIdentifier} AND r.pass_type_identifier = ${passTypeIdentifier}
    )
    SELECT v.pass_id::text AS pass_id, (floor(extract(epoch FROM h.at) * 1000000))::bigint::text AS tag
    FROM horizon h LEFT JOIN versions v
      ON ${since === undefined} OR floor(extract(epoch FROM v.version) * 1000000) >= ${since ?? '0'}::numeric
    ORDER BY v.pass_id`;
  const serialNumbers = rows.flatMap((r) => (r.pass_id ? [r.pass_id] : []));
  if (!serialNumbers.length) return null;
  return { serialNumbers, lastUpdated: firstRow(rows, 'the tag').tag };
}

/**
 * The registered passes whose expiry passed on their organization's clock and was not seen yet
 * (of one organization, or of all): noted now, and a push queued for each, in one statement (its
 * own transaction). Called when a sandbox clock moves and by the periodic check (tasks/wallet-expiries.ts),
 * which catches the midnight of an organization's clock. Answers how many passes were noted.
 */
export async function noteExpiries(db: Db, organizationId?: string): Promise<number> {
  const rows = await db<{ passes: number }[]>`
    WITH noted AS (
      UPDATE wallet_registrations r SET expiry_noted_at = now()
      FROM passes p
      WHERE p.id = r.pass_id AND r.expiry_noted_at IS NULL
        ${organizationId === undefined ? db`` : db`AND r.organization_id = ${organizationId}`}
        AND p.expiration_date IS NOT NULL
        AND loyalty_pass_status(p.status, p.expiration_date, p.organization_id) = 'expired'
      RETURNING r.pass_id
    ), queued AS (${pushJobsOf(db, db`SELECT DISTINCT pass_id FROM noted`)})
    SELECT count(*)::int AS passes FROM queued`;
  return firstRow(rows, 'the count of noted expiries').passes;
}
