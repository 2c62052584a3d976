import type { Config } from '../../config.js';
import type { Sql } from '../../db/pool.js';

/**
 * What the wallet services read of the server (context.ts's AppContext has it all; services do
 * not import the context layer). The object is the server's own, so per-server caches key on it.
 */
export type WalletApp = { sql: Sql; config: Config; baseUrl: () => string };
