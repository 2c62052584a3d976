import type { AppContext } from '../../context.js';
import type { WalletPass } from './wallet-pass.js';

/** A signed Apple Wallet pass of one version of a pass: the `.pkpass` archive and its validators. */
export type Pkpass = {
  body: Buffer;
  /** Strong ETag of this version (quoted). */
  etag: string;
  /** The pass's version time (updated_at, or its expiry when that is later and has passed). */
  lastModified: Date;
};

/**
 * The `.pkpass` of this pass as it is now, built on demand and cached per version (never at
 * issue time). Used by GET /wallet/{code}.pkpass and the web service's GET /v1/passes/….
 */
export async function pkpassFor(_app: AppContext, _pass: WalletPass): Promise<Pkpass> {
  throw new Error('pkpassFor: not built yet (issue 28, part A)');
}
