/**
 * Delivery attempts in flight per webhook subscription, in this process (issue 11: one dead
 * receiver must use its own share of the workers and no more). Jobs of a subscription carry the
 * flag `subscriptionFlag(id)`; while a subscription is at its cap, the worker asks PostgreSQL only
 * for jobs without that flag (graphile-worker `forbiddenFlags`), so its backlog waits in the
 * database instead of in the workers.
 */
export type SubscriptionGate = {
  /** A slot for the subscription, with the function that gives it back, or null at the cap. */
  enter: (subscriptionId: string) => (() => void) | null;
  /** Flags of the subscriptions at their cap, or null when none is (jobs are then fetched in batches). */
  forbiddenFlags: () => string[] | null;
};

export const subscriptionFlag = (subscriptionId: string) => `webhook_subscription:${subscriptionId}`;

export function createSubscriptionGate(perSubscription: number): SubscriptionGate {
  const inFlight = new Map<string, number>();
  let full: string[] | null = null;
  const update = () => {
    const flags = [...inFlight].filter(([, n]) => n >= perSubscription).map(([id]) => subscriptionFlag(id));
    full = flags.length ? flags : null;
  };
  return {
    enter(subscriptionId) {
      const n = inFlight.get(subscriptionId) ?? 0;
      if (n >= perSubscription) return null;
      inFlight.set(subscriptionId, n + 1);
      if (n + 1 >= perSubscription) update();
      let left = false;
      return () => {
        if (left) return;
        left = true;
        const rest = (inFlight.get(subscriptionId) ?? 1) - 1;
        if (rest > 0) inFlight.set(subscriptionId, rest);
        else inFlight.delete(subscriptionId);
        if (rest + 1 >= perSubscription) update();
      };
    },
    forbiddenFlags: () => full,
  };
}
