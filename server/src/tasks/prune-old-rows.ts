import type { Task } from 'graphile-worker';
import { describePurge, purgeOldRows } from '../services/platform/retention.js';
import { removeExpiredOrganizations } from '../services/sandbox/sandbox-organizations.js';
import type { TaskContext } from './context.js';

/**
 * Retention: queued when a worker starts and then every 10 minutes, or every quarter of
 * LOYALTY_RETENTION_DAYS when that is shorter (queueEvery in worker.ts), under one job key.
 * Deletes what is older than LOYALTY_RETENTION_DAYS in small batches (services/retention.ts) and
 * logs one line when anything went. Throwaway sandbox organizations whose time to live (real
 * time) has ended go too, with all their data (services/sandbox-organizations.ts): at most 10
 * minutes after their expires_at.
 */
export const pruneOldRowsTask =
  ({ sql, config }: TaskContext): Task<'prune_old_rows'> =>
  async () => {
    const line = describePurge(await purgeOldRows(sql, { retentionDays: config.retentionDays }));
    if (line) console.error(line);
    const organizations = await removeExpiredOrganizations(sql);
    if (organizations)
      console.error(
        `loyalty: retention: removed ${organizations} expired sandbox organization${organizations === 1 ? '' : 's'}`,
      );
  };
