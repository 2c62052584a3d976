// Webhook delivery throughput (issue 5: at least 500 deliveries per second sustained) to a local
// receiver, with the real graphile-worker runner and the real delivery task (signing, SSRF-checked
// undici client, attempt log) on an embedded PostgreSQL with durable settings. The receiver runs
// in its own process and answers 200 at once. Deliveries are queued first (fan-out, not timed),
// then the worker drains them. Beside it, measured in the same run against the same receiver, the
// anchor of issue 17 (lib/post-loop.mjs): a bare loop of POSTs of the same body from this process,
// keep-alive, as many in flight as the worker sends at once.
// Run after building: `npx tsc -b server && node test/bench/server-webhooks.mjs` (or `npm run bench`).
// BENCH_DELIVERIES (default 20000), BENCH_SUBSCRIPTIONS (default "1,8": one run per count),
// BENCH_CONCURRENCY (default: the worker's default), BENCH_ANCHOR_SECONDS (default 4). Exit 1 when
// issue 30's goal (sustained ≥ 0.35× the bare POST loop, for one subscription and for eight) or
// issue 5's (≥ 500/s, every delivery delivered exactly once) is missed.

if (process.argv[2] === 'receiver') {
  // The receiver process: counts requests, answers 200 "ok".
  const { createServer } = await import('node:http');
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () =>
    process.send({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }),
  );
  process.on('message', (m) => m === 'count' && process.send({ count }));
} else {
  const { loadConfig, startWorker, DEFAULT_CONCURRENCY, serverModule } = await import('./lib/server-dist.mjs');
  const { startBenchDatabase, loadLine } = await import('./lib/bench-database.mjs');
  const { fanOutEvents, envelopeOf, deliveryHeaders } = await serverModule('services/webhooks/deliveries.js');
  const { postLoop } = await import('./lib/post-loop.mjs');
  const { summaryRow } = await import('./lib/summary.mjs');

  const total = Number(process.env.BENCH_DELIVERIES ?? 20_000);
  // Subscriptions of the organization to member.created, each to the same receiver: total / subscriptions events,
  // each delivered to all. One run per count (issue 30: one subscription and eight), each on a database of its own.
  const subscriptionCounts = (process.env.BENCH_SUBSCRIPTIONS ?? '1,8').split(',').map(Number);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  const target = 500;
  /** Issue 30: sustained deliveries at least this share of the bare POST loop's rate, with the per-subscription cap at its default. */
  const goalRatio = 0.35;

  const { forkReceiver } = await import('./lib/receiver-process.mjs');
  const receiver = await forkReceiver(import.meta.url);
  const { ask } = receiver;
  const { port } = receiver.ready;
  let failed = false;
  try {
    for (const subscriptions of subscriptionCounts) {
      console.log(`\n--- ${subscriptions} subscription(s)`);
      if (!(await measure(subscriptions))) failed = true;
    }
  } finally {
    receiver.kill();
  }
  process.exit(failed ? 1 : 0);

  /** One run: `total` deliveries to `subscriptions` subscriptions, beside the bare POST loop; whether every goal was met. */
  async function measure(subscriptions) {
    const db = await startBenchDatabase();
    const { sql } = db;
    let failed = false;
    try {
      await sql`INSERT INTO webhook_subscriptions (organization_id, url, events, secret, created_at)
              SELECT 'org-acme', ${`http://127.0.0.1:${port}/hook/`} || i, '{member.created}',
                     'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', now() - interval '1 minute'
              FROM generate_series(1, ${subscriptions}::int) i`;
      const ids = (
        await sql`
      INSERT INTO events (organization_id, type, data)
      SELECT 'org-acme', 'member.created', jsonb_build_object('member_id', gen_random_uuid(), 'brand_id', 'brand-acme')
      FROM generate_series(1, ${Math.ceil(total / subscriptions)}::int) RETURNING id`
      ).map((r) => r.id);
      for (let i = 0; i < ids.length; i += 5000) await fanOutEvents(sql, ids.slice(i, i + 5000));
      await sql`VACUUM ANALYZE`;
      console.log(
        `queued ${total.toLocaleString('en')} deliveries to ${subscriptions} subscription(s) of a local receiver; worker concurrency ${concurrency}, ` +
          `at most ${loadConfig({}).webhookConcurrencyPerSubscription} attempts in flight per subscription (LOYALTY_WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION)`,
      );

      const config = { ...loadConfig({}), webhookAllowInsecure: true };

      // The anchor: the same receiver, the body of one of these deliveries and headers of the same
      // size (signed once), keep-alive, as many in flight as the worker has attempts at once (its
      // lanes: per subscription, bounded by its concurrency).
      const [event] =
        await sql`SELECT id AS event_id, type AS event_type, created_at AS event_created_at, organization_id, data
                              FROM events ORDER BY id LIMIT 1`;
      const body = envelopeOf(event);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Loyalty-Webhooks/1.0',
        ...deliveryHeaders({
          body,
          eventId: event.event_id,
          eventType: event.event_type,
          attempt: 1,
          attemptedAt: new Date(),
          secrets: ['whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA='],
          requestId: `${event.event_id}.1`,
        }),
      };
      const inFlight = Math.min(concurrency, subscriptions * config.webhookConcurrencyPerSubscription);
      const anchorSeconds = Number(process.env.BENCH_ANCHOR_SECONDS ?? 4);
      const anchor = await postLoop({
        url: `http://127.0.0.1:${port}/hook/1`,
        body,
        headers,
        inFlight,
        seconds: anchorSeconds,
        connections: concurrency,
      });
      const { count: anchorCount } = await ask('count');
      console.log(
        `anchor, a bare loop of POSTs (${body.length} bytes, keep-alive, ${inFlight} in flight) to the same receiver: ` +
          `${Math.round(anchor.perSecond)}/s over ${anchor.seconds.toFixed(1)} s (${anchor.ok} answered 200, ${anchor.failed} not)`,
      );

      const started = performance.now();
      const runner = await startWorker({ connectionString: db.url, sql, config, concurrency });
      const marks = [];
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        const [{ done }] = await sql`SELECT count(*)::int AS done FROM webhook_deliveries WHERE status <> 'pending'`;
        marks.push({ t: (performance.now() - started) / 1000, done });
        if (done >= total) break;
        if (marks.length > 4 * 600) throw new Error('deliveries did not finish in 10 minutes');
      }
      const seconds = (performance.now() - started) / 1000;
      await runner.stop();

      // Sustained: from 10 % to 90 % of the deliveries (start-up and the tail left out).
      const at = (share) => marks.find((m) => m.done >= share * total);
      const from = at(0.1);
      const to = at(0.9);
      const sustained = (to.done - from.done) / (to.t - from.t);
      const [{ delivered, p50, p99 }] = await sql`
      SELECT count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS p99
      FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id`;
      const count = (await ask('count')).count - anchorCount;
      const ok = sustained >= target && delivered === total && count === total;
      if (!ok) failed = true;
      console.log(
        `delivered ${delivered.toLocaleString('en')} in ${seconds.toFixed(1)} s: ${Math.round(total / seconds)} deliveries/s overall, ` +
          `${Math.round(sustained)}/s sustained (10-90 %); attempt p50 ${p50} ms, p99 ${p99} ms; receiver counted ${count} ` +
          `${ok ? 'ok' : `FAIL: target ${target}/s, every delivery delivered exactly once`}`,
      );
      console.log(`ratio to the anchor: ${(sustained / anchor.perSecond).toFixed(2)} of the bare POST loop`);
      const met = summaryRow({
        id: subscriptions === 1 ? 'deliveries-sustained' : `deliveries-sustained-${subscriptions}`,
        measure: `webhook deliveries, sustained, ${subscriptions} subscription${subscriptions === 1 ? '' : 's'}`,
        unit: '/s',
        now: sustained,
        anchor: anchor.perSecond,
        anchorLabel: `bare POST loop, ${inFlight} in flight`,
        goal: goalRatio,
        goalOn: 'ratio',
        better: 'higher',
      });
      if (!met || anchor.failed) failed = true;
      // Other processes on the machine change these figures: say how busy it was.
      console.log(loadLine());
    } finally {
      await db.stop();
    }
    return !failed;
  }
}
