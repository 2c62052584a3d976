/**
 * Every task's job name and payload, declared in graphile-worker's `GraphileWorker.Tasks`: it
 * types each task (`Task<'deliver_webhook'>`) and `addJob`. The names are those of the jobs in the
 * database and never change with a file's name: jobs queued before an upgrade keep them. The
 * payloads are built in SQL (graphile_worker.add_job) where the comment says.
 */

/** A delivery lane of one subscription (services/deliveries.ts). */
export type LanePayload = { subscription_id: string; lane: number };
/** Jobs of one attempt each, queued before deliveries went through lanes (a database upgraded with some waiting). */
export type LegacyPayload = { delivery_id: string; attempt: number };

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** services/deliveries.ts: the fan-out and wakeDeliveryLanes. */
      deliver_webhook: LanePayload | LegacyPayload;
      /** Queued with the events it names, by services/outbox.ts (the one door of every writer of events). */
      fan_out_events: { event_ids: string[] };
      /** services/voucher-jobs.ts (each lane's first round) and voucher-rounds.ts (the next ones). */
      issue_voucher_round: { job_id: string; lane?: number };
      /** worker.ts (queueEvery), with an empty payload. */
      prune_old_rows: Record<string, never>;
      /** worker.ts (queueEvery), with an empty payload. */
      resume_stalled_jobs: Record<string, never>;
      /** services/wallet/wallet-pushes.ts (queuePassPushes) and wallet-registrations.ts (noteExpiries), in SQL. */
      wallet_push: { pass_id: string };
      /** worker.ts (queueEvery), with an empty payload. */
      wallet_expiries: Record<string, never>;
    }
  }
}
