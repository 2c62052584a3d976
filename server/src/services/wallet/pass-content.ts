import { authenticationTokenOf, serialNumberOf, webServiceUrlOf } from './pass-identity.js';
import { brandColour, cssRgb } from './pass-images.js';
import type { WalletPass } from './wallet-pass.js';

/**
 * What an Apple pass of a WalletPass says (pass.json's keys, Apple's "Pass" reference), apart
 * from the signing: a pure function of the pass, the server's base URL and secret key, and the
 * signer's pass type and team. pkpass.ts hands it to passkit-generator and keys its cache by it.
 */
export type PassField = {
  key: string;
  label: string;
  value: string | number;
  changeMessage?: string;
  dateStyle?: 'PKDateStyleMedium';
  textAlignment?: 'PKTextAlignmentNatural';
};

export type PassContent = {
  style: 'coupon' | 'storeCard';
  props: {
    formatVersion: 1;
    passTypeIdentifier: string;
    teamIdentifier: string;
    serialNumber: string;
    authenticationToken: string;
    webServiceURL: string;
    organizationName: string;
    description: string;
    logoText: string;
    backgroundColor: string;
    foregroundColor: string;
    labelColor: string;
    voided?: true;
  };
  fields: {
    headerFields: PassField[];
    primaryFields: PassField[];
    secondaryFields: PassField[];
    auxiliaryFields: PassField[];
    backFields: PassField[];
  };
  barcode: { format: 'PKBarcodeFormatQR'; message: string; messageEncoding: 'iso-8859-1'; altText: string };
  /** The end of the expiration date's day (UTC), when the pass has one. */
  expirationDate: Date | undefined;
};

const STATUS_TEXT: Record<WalletPass['status'], string> = {
  active: 'Active',
  redeemed: 'Redeemed',
  expired: 'Expired',
};

/** The instant a pass with this expiration date (YYYY-MM-DD) stops being valid: its day's end, UTC (loyalty_pass_status in SQL). */
export const expiryInstantOf = (expirationDate: string) => new Date(`${expirationDate}T23:59:59Z`);

export function passContentOf(
  pass: WalletPass,
  {
    baseUrl,
    secretKey,
    passTypeId,
    teamId,
  }: { baseUrl: string; secretKey: string; passTypeId: string; teamId: string },
): PassContent {
  const voided = pass.status !== 'active';
  // Wallet needs a non-empty organizationName and logoText; a brand is named, but be safe.
  const brand = pass.brand_name.trim() || 'Loyalty';
  const expires: PassField[] = pass.expiration_date
    ? [
        {
          key: 'expires',
          label: 'Expires',
          value: expiryInstantOf(pass.expiration_date).toISOString(),
          dateStyle: 'PKDateStyleMedium',
        },
      ]
    : [];
  const status: PassField = { key: 'status', label: 'Status', value: STATUS_TEXT[pass.status] };
  const back: PassField[] = [
    { key: 'code', label: 'Pass code', value: pass.pass_code },
    { key: 'issuer', label: 'Issued by', value: brand },
  ];
  const fields: PassContent['fields'] =
    pass.kind === 'storecard'
      ? {
          headerFields: [status],
          primaryFields: [{ key: 'balance', label: 'Balance', value: pass.balance, changeMessage: 'Balance %@' }],
          secondaryFields: [
            { key: 'points', label: 'Points', value: pass.points, changeMessage: 'Points %@' },
            { key: 'card', label: 'Card', value: pass.title },
          ],
          auxiliaryFields: expires,
          backFields: back,
        }
      : {
          headerFields: [status],
          primaryFields: [{ key: 'offer', label: brand, value: pass.title }],
          secondaryFields: [],
          auxiliaryFields: expires,
          backFields: back,
        };
  return {
    style: pass.kind === 'storecard' ? 'storeCard' : 'coupon',
    props: {
      formatVersion: 1,
      passTypeIdentifier: passTypeId,
      teamIdentifier: teamId,
      serialNumber: serialNumberOf(pass.id),
      authenticationToken: authenticationTokenOf(secretKey, pass.id),
      webServiceURL: webServiceUrlOf(baseUrl),
      organizationName: brand,
      description: `${brand}: ${pass.title}`,
      logoText: brand,
      backgroundColor: cssRgb(brandColour(brand)),
      foregroundColor: 'rgb(255, 255, 255)',
      labelColor: 'rgb(220, 220, 220)',
      ...(voided && { voided: true as const }),
    },
    fields,
    barcode: {
      format: 'PKBarcodeFormatQR',
      message: pass.qr_code,
      messageEncoding: 'iso-8859-1',
      altText: pass.pass_code,
    },
    expirationDate: pass.expiration_date ? expiryInstantOf(pass.expiration_date) : undefined,
  };
}
