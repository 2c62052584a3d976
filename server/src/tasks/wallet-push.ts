import type { Task } from 'graphile-worker';
import { isGoneToken, sendApnsPushes } from '../services/wallet/apns.js';
import {
  forgetPushTokens,
  type PushTarget,
  pushTargetsOf,
  recordSandboxPush,
} from '../services/wallet/wallet-pushes.js';
import type { TaskContext } from './context.js';

/**
 * Queued with a change of a registered pass (services/wallet/wallet-pushes.ts): one push to each
 * device registered for the pass now. With the operator's Apple credentials, to APNs; otherwise
 * into the sandbox's push sink. Tokens APNs calls gone lose their registrations; any other failure
 * fails the job, which graphile-worker runs again (a repeated push is harmless: the device asks what
 * changed and finds nothing new).
 */
export const walletPushTask =
  ({ sql, config, apnsCa }: TaskContext): Task<'wallet_push'> =>
  async ({ pass_id }) => {
    const targets = await pushTargetsOf(sql, pass_id);
    const apple = config.wallet.apple;
    if (!apple) {
      for (const target of targets) await recordSandboxPush(sql, target);
      return;
    }
    const byTopic = new Map<string, PushTarget[]>();
    for (const target of targets) byTopic.set(target.topic, [...(byTopic.get(target.topic) ?? []), target]);
    const failures: string[] = [];
    for (const [topic, group] of byTopic) {
      const results = await sendApnsPushes(
        apple,
        config.wallet.apnsUrl,
        topic,
        group.map((t) => t.push_token),
        { ca: apnsCa },
      );
      await forgetPushTokens(
        sql,
        results.filter(isGoneToken).map((r) => r.pushToken),
      );
      for (const r of results)
        if (r.status !== 200 && !isGoneToken(r)) failures.push(`${r.status}${r.reason ? ` ${r.reason}` : ''}`);
    }
    // The push tokens stay out of the error (it is logged): the statuses say what went wrong.
    if (failures.length) throw new Error(`APNs refused ${failures.length} push(es): ${failures.join(', ')}`);
  };
