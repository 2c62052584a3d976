import type { Db } from '../../db/pool.js';

/** What a wallet (the page, an Apple pass, a Google Wallet object) shows of one pass: the pass itself, never its member. */
export type WalletPass = {
  /** The pass's id: the Apple pass's serialNumber and the Google object's id suffix. */
  id: string;
  organization_id: string;
  brand_id: string;
  kind: 'coupon' | 'storecard';
  brand_name: string;
  /** The coupon's or storecard's title. */
  title: string;
  /** The value of the pass's QR code, as the API's pass resources carry it (`qr_code`). */
  qr_code: string;
  pass_code: string;
  /** From loyalty_pass_status in SQL, as every API answer computes it, so the organization's clock applies. */
  status: 'active' | 'redeemed' | 'expired';
  expiration_date: string | null;
  points: number;
  balance: number;
  redeemed_at: string | null;
  /** When the pass's row last changed (ISO 8601, milliseconds). */
  updated_at: string;
  /**
   * The whole second of the pass's latest version (ISO 8601): later than every version before it,
   * so a Last-Modified of whole seconds tells versions apart (migration 0044).
   */
  version_at: string;
};

/** Pass codes are 16 characters; anything much longer is no code, and is not looked up. */
const LONGEST_CODE = 64;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * GET /wallet/{code}: the pass with this code, of any organization (the code is the bearer's
 * secret: 80 random bits, what the member got in their wallet link), or undefined.
 */
export async function findWalletPass(db: Db, code: string): Promise<WalletPass | undefined> {
  if (code.length > LONGEST_CODE) return undefined;
  const [pass] = await db<WalletPass[]>`${selectWalletPass(db)} WHERE p.pass_code = ${code}`;
  return pass;
}

/** The pass with this id (an Apple serialNumber), of any organization: callers check the pass's own credential. */
export async function findWalletPassById(db: Db, id: string): Promise<WalletPass | undefined> {
  if (!UUID.test(id)) return undefined;
  const [pass] = await db<WalletPass[]>`${selectWalletPass(db)} WHERE p.id = ${id}`;
  return pass;
}

function selectWalletPass(db: Db) {
  return db`
    SELECT p.id, p.organization_id, p.brand_id, p.kind, b.name AS brand_name,
           COALESCE(c.title, s.title) AS title,
           p.pass_code AS qr_code, p.pass_code,
           loyalty_pass_status(p.status, p.expiration_date, p.organization_id) AS status,
           p.expiration_date::text AS expiration_date, p.points, p.balance,
           to_char(p.redeemed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS redeemed_at,
           to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
           to_char(p.version_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS version_at
    FROM passes p
    JOIN brands b ON b.id = p.brand_id
    LEFT JOIN coupons c ON c.id = p.coupon_id
    LEFT JOIN storecards s ON s.id = p.storecard_id`;
}
