import { createHash } from 'node:crypto';
import type { WalletPass } from './wallet-pass.js';

/**
 * The Google Wallet classes and objects of a pass, in the shapes of Google's Wallet API
 * (https://developers.google.com/wallet/reference/rest/v1): a coupon is an offer, a storecard a
 * loyalty card. The class travels in the save link's JWT with its object, so a link works
 * without creating classes first (Google inserts a class it does not know; one it knows is kept).
 */

type Barcode = { type: 'QR_CODE'; value: string; alternateText: string };
type TimeInterval = { end: { date: string } };
type State = 'ACTIVE' | 'EXPIRED' | 'INACTIVE';

export type OfferClass = {
  id: string;
  issuerName: string;
  provider: string;
  title: string;
  redemptionChannel: 'INSTORE';
  reviewStatus: 'UNDER_REVIEW';
};
export type OfferObject = {
  id: string;
  classId: string;
  state: State;
  barcode: Barcode;
  validTimeInterval?: TimeInterval;
};
export type LoyaltyClass = {
  id: string;
  issuerName: string;
  programName: string;
  reviewStatus: 'UNDER_REVIEW';
};
export type LoyaltyPoints = { label: string; balance: { int: number } };
export type LoyaltyObject = OfferObject & {
  loyaltyPoints: LoyaltyPoints;
  secondaryLoyaltyPoints: LoyaltyPoints;
};

/** The JWT's `payload` claim: one class and one object of the pass's kind. */
export type SaveToWalletPayload =
  | { offerClasses: [OfferClass]; offerObjects: [OfferObject] }
  | { loyaltyClasses: [LoyaltyClass]; loyaltyObjects: [LoyaltyObject] };

/**
 * A redeemed coupon is INACTIVE (used, not merely past its date); a pass past its expiration
 * date is EXPIRED. Google Wallet moves both out of the member's active passes.
 */
export const GOOGLE_STATE: Record<WalletPass['status'], State> = {
  active: 'ACTIVE',
  redeemed: 'INACTIVE',
  expired: 'EXPIRED',
};

/** How long brand and title may be in a link (code points): Google shows about 20 on a phone, and links must stay short. */
export type TextLimits = { brand: number; title: number };
export const DEFAULT_TEXT_LIMITS: TextLimits = { brand: 40, title: 60 };

const clip = (text: string, limit: number) => {
  const chars = [...text.trim()];
  return chars.length <= limit ? chars.join('') : `${chars.slice(0, limit - 1).join('')}…`;
};

/**
 * The class of a pass's coupon or storecard: one per coupon/storecard of an organization, named
 * by a hash (Google allows letters, digits, `.`, `_` and `-` after the issuer id).
 */
export function googleClassId(
  issuerId: string,
  pass: Pick<WalletPass, 'kind' | 'organization_id'>,
  templateId: string,
) {
  const digest = createHash('sha256').update(`${pass.organization_id}\n${templateId}`).digest('base64url').slice(0, 22);
  return `${issuerId}.${pass.kind === 'coupon' ? 'offer' : 'loyalty'}-${digest}`;
}

/**
 * The JWT payload of a pass as it is now. `templateId` is its coupon's or storecard's id.
 * Expiry: Google's date-time without an offset is the local time where the pass is used, so the
 * pass is valid through its expiration date, as the API counts it.
 */
export function saveToWalletPayload(
  issuerId: string,
  pass: WalletPass,
  templateId: string,
  limits: TextLimits = DEFAULT_TEXT_LIMITS,
): SaveToWalletPayload {
  const brand = clip(pass.brand_name, limits.brand);
  const title = clip(pass.title, limits.title);
  const classId = googleClassId(issuerId, pass, templateId);
  const object: OfferObject = {
    id: `${issuerId}.${pass.id}`,
    classId,
    state: GOOGLE_STATE[pass.status],
    barcode: { type: 'QR_CODE', value: pass.qr_code, alternateText: pass.pass_code },
    ...(pass.expiration_date ? { validTimeInterval: { end: { date: `${pass.expiration_date}T23:59:59` } } } : {}),
  };
  if (pass.kind === 'coupon') {
    return {
      offerClasses: [
        {
          id: classId,
          issuerName: brand,
          provider: brand,
          title,
          redemptionChannel: 'INSTORE',
          reviewStatus: 'UNDER_REVIEW',
        },
      ],
      offerObjects: [object],
    };
  }
  return {
    loyaltyClasses: [{ id: classId, issuerName: brand, programName: title, reviewStatus: 'UNDER_REVIEW' }],
    loyaltyObjects: [
      {
        ...object,
        loyaltyPoints: { label: 'Balance', balance: { int: pass.balance } },
        secondaryLoyaltyPoints: { label: 'Points', balance: { int: pass.points } },
      },
    ],
  };
}
