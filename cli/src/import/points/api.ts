// `points import`: the API calls it makes, as an interface: the CLI wires them to the SDK
// (services/points/import-api.ts), tests to an in-memory ledger.
import type { Scan } from './plan.js';

/** A row the API refused (unknown pass, insufficient balance, expired pass): rejected, the run goes on. */
export class RowRefused extends Error {}

/** The API calls the import makes; the CLI wires them to the SDK, tests to fakes. */
export interface PointsApi {
  /** Every member of the brand. */
  members(signal: AbortSignal): Promise<Array<{ email: string; uuid: string }>>;
  /** The brand's passes of one storecard: lower-case e-mail → pass code. */
  passes(storecardId: string, signal: AbortSignal): Promise<Map<string, string>>;
  /** The spendable balance of the member's pass. */
  balance(uuid: string, passCode: string, signal: AbortSignal): Promise<number>;
  /** Issues the member's pass of the storecard (or finds it); its code. */
  issuePass(uuid: string, storecardId: string, signal: AbortSignal): Promise<string>;
  /** One scan; `created: false` when the reference was recorded before (nothing changed). */
  scan(passCode: string, scan: Scan, signal: AbortSignal): Promise<{ created: boolean; balance: number }>;
}
