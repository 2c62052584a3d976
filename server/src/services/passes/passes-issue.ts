import type { Db } from '../../db/pool.js';
import { addDays, isCalendarDate, todayUtc } from '../../lib/dates.js';
import { defined, firstRow } from '../../lib/defined.js';
import { newPassCode, walletUrl } from '../../lib/pass-codes.js';
import { invalid, invalidField, notFound } from '../platform/errors.js';
import { recordEvents } from '../webhooks/events.js';
import { requireBrand, requireBrandMember } from '../platform/members-scope.js';
import type { OrganizationScope } from '../platform/organization-scope.js';

export type IssuePassInput = { brand_id: string; coupon_id?: string; storecard_id?: string; expiration_date?: string };
export type IssuePassResult = { created: boolean; passId: string; passCode: string; walletUrl: string };

/**
 * The expiration date of a new coupon pass: `no-date` never expires, a `Y-m-d` date (today or
 * later, UTC) is taken as it is, and without one the coupon's `valid_days` counts from today
 * (null `valid_days`: never expires).
 */
export function couponExpiration(
  requested: string | undefined,
  validDays: number | null,
  today = todayUtc(),
): string | null {
  if (requested === 'no-date') return null;
  if (requested !== undefined) {
    if (!isCalendarDate(requested))
      throw invalidField('expiration_date', 'The expiration_date field must be a date in the format Y-m-d or no-date.');
    if (requested < today)
      throw invalidField('expiration_date', 'The expiration_date field must be a date of today or later.');
    return requested;
  }
  if (validDays == null) return null;
  // A coupon's valid_days is any integer: a date past 9999-12-31 is refused, never a 500.
  const expires = Math.abs(validDays) <= MAX_VALID_DAYS ? addDays(today, validDays) : '';
  if (!isCalendarDate(expires))
    throw invalidField('coupon_id', "The coupon's valid_days would put the expiration date beyond 9999-12-31.");
  return expires;
}

/** More days than from year 1 to 9999: addDays stays inside JavaScript's dates below it. */
const MAX_VALID_DAYS = 3_700_000;

/**
 * POST /members/{uuid}/passes. A coupon always gets a new pass (201) and records `coupon.issued`;
 * a storecard has one pass per member: the first call creates it (201), later calls return it
 * (200, `created: false`). An inactive coupon or storecard is a 422.
 */
export async function issuePassToMember(
  tx: Db,
  scope: OrganizationScope,
  memberId: string,
  input: IssuePassInput,
  baseUrl: string,
): Promise<IssuePassResult> {
  if ((input.coupon_id === undefined) === (input.storecard_id === undefined)) {
    const message = 'Send exactly one of coupon_id and storecard_id.';
    throw invalid({ coupon_id: [message], storecard_id: [message] }, message);
  }
  const brand = await requireBrand(tx, scope, input.brand_id);
  await requireBrandMember(tx, brand, memberId);
  const result = (created: boolean, row: { id: string; pass_code: string }): IssuePassResult => ({
    created,
    passId: row.id,
    passCode: row.pass_code,
    walletUrl: walletUrl(baseUrl, row.pass_code),
  });

  if (input.coupon_id !== undefined) {
    // "Today" is the organization's sandbox clock's (loyalty_now(org), migration 0040): real today outside sandbox mode.
    const [coupon] = await tx<{ id: string; active: boolean; valid_days: number | null; today: string }[]>`
      SELECT id, active, valid_days, (loyalty_now(organization_id) AT TIME ZONE 'UTC')::date::text AS today
      FROM coupons WHERE id = ${input.coupon_id} AND brand_id = ${brand.id}`;
    if (!coupon) throw notFound('Coupon');
    if (!coupon.active) throw invalidField('coupon_id', 'The coupon is no longer available.');
    const expirationDate = couponExpiration(input.expiration_date, coupon.valid_days, coupon.today);
    const code = newPassCode();
    const inserted = await tx<{ id: string; pass_code: string }[]>`
      INSERT INTO passes (organization_id, brand_id, member_id, kind, coupon_id, pass_code, qr_code, expiration_date, start_date)
      VALUES (${brand.organizationId}, ${brand.id}, ${memberId}, 'coupon', ${coupon.id}, ${code}, ${code}, ${expirationDate}, ${coupon.today}::date)
      RETURNING id, pass_code`;
    const pass = firstRow(inserted, 'the inserted coupon pass');
    await recordEvents(tx, [
      {
        organizationId: brand.organizationId,
        type: 'coupon.issued',
        data: {
          coupon_id: coupon.id,
          pass_id: pass.id,
          member_id: memberId,
          brand_id: brand.id,
          expires_at: expirationDate,
        },
      },
    ]);
    return result(true, pass);
  }

  // Exactly one of the two was sent (checked above), and it was not coupon_id.
  const storecardId = defined(input.storecard_id, 'the storecard_id');
  const [card] = await tx<{ id: string; active: boolean }[]>`
    SELECT id, active FROM storecards WHERE id = ${storecardId} AND brand_id = ${brand.id}`;
  if (!card) throw notFound('Storecard');
  if (!card.active) throw invalidField('storecard_id', 'The storecard is no longer available.');
  const code = newPassCode();
  const [pass] = await tx<{ id: string; pass_code: string }[]>`
    INSERT INTO passes (organization_id, brand_id, member_id, kind, storecard_id, pass_code, qr_code, start_date)
    VALUES (${brand.organizationId}, ${brand.id}, ${memberId}, 'storecard', ${card.id}, ${code}, ${code},
            (loyalty_now(${brand.organizationId}::text) AT TIME ZONE 'UTC')::date)
    ON CONFLICT (member_id, storecard_id) WHERE kind = 'storecard' DO NOTHING
    RETURNING id, pass_code`;
  if (pass) return result(true, pass);
  const [existing] = await tx<{ id: string; pass_code: string }[]>`
    SELECT id, pass_code FROM passes WHERE member_id = ${memberId} AND storecard_id = ${card.id} AND kind = 'storecard'`;
  return result(false, defined(existing, 'the existing storecard pass'));
}
