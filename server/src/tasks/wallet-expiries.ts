import type { Task } from 'graphile-worker';
import { noteExpiries } from '../services/wallet/wallet-registrations.js';
import type { TaskContext } from './context.js';

/**
 * Every minute (worker.ts): registered passes that expired on their organization's clock since the
 * last check (its midnight passed) are noted as updated and their devices pushed. A sandbox clock
 * move does the same for its organization at once (routes/sandbox.ts).
 */
export const walletExpiriesTask =
  ({ sql }: TaskContext): Task<'wallet_expiries'> =>
  async () => {
    await noteExpiries(sql);
  };
