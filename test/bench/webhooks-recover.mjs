// Recovery after an outage (issue 15): POST /webhook-subscriptions/{id}/recover of 10,000 failed
// deliveries, timed as the re-queue (the service's one statement and the lanes' wake-up) and as
// the resend to a local receiver, beside the plain delivery rate of as many new deliveries
// measured in the same run, on the same database, worker and receiver.
// Run after building: `npx tsc -b server && node test/bench/webhooks-recover.mjs` (or `npm run bench`).
// BENCH_DELIVERIES (default 10000).

if (process.argv[2] === 'receiver') {
  const { createServer } = await import('node:http');
  /** Requests per message id: a recovered delivery must arrive once more, no more. */
  const seen = new Map();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['loyalty-message-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () =>
    process.send({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }),
  );
  process.on('message', (m) => {
    if (m === 'count') process.send({ requests: [...seen.values()].reduce((a, b) => a + b, 0), ids: seen.size });
  });
} else {
  const { loadConfig, startWorker, DEFAULT_CONCURRENCY, serverModule } = await import('./lib/server-dist.mjs');
  const { startBenchDatabase, loadLine } = await import('./lib/bench-database.mjs');
  const { fanOutEvents } = await serverModule('services/webhooks/deliveries.js');
  const { recoverDeliveries } = await serverModule('services/webhooks/deliveries-recover.js');

  const total = Number(process.env.BENCH_DELIVERIES ?? 10_000);
  /** The resend runs at least at this share of the plain delivery rate. */
  const targetRatio = 0.8;
  const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';

  const { forkReceiver } = await import('./lib/receiver-process.mjs');
  const receiver = await forkReceiver(import.meta.url);
  const { ask } = receiver;
  const { port } = receiver.ready;

  const db = await startBenchDatabase();
  const { sql } = db;
  let failed = false;
  try {
    const config = { ...loadConfig({}), webhookAllowInsecure: true };
    const lanes = config.webhookConcurrencyPerSubscription;

    /**
     * A subscription and `total` events delivered to it, pending or failed as after an outage. Each
     * subscription has an event type of its own, so one's events never fan out to the other.
     */
    async function subscriptionWith(name, type, state) {
      const [{ id }] = await sql`
        INSERT INTO webhook_subscriptions (organization_id, url, events, secret, created_at)
        VALUES ('org-acme', ${`http://127.0.0.1:${port}/${name}`}, ${[type]}, ${secret}, now() - interval '1 hour')
        RETURNING id`;
      const ids = (
        await sql`
        INSERT INTO events (organization_id, type, data)
        SELECT 'org-acme', ${type}, jsonb_build_object('member_id', gen_random_uuid(), 'brand_id', 'brand-acme')
        FROM generate_series(1, ${total}::int) RETURNING id`
      ).map((r) => r.id);
      if (state === 'pending') {
        for (let i = 0; i < ids.length; i += 5000) await fanOutEvents(sql, ids.slice(i, i + 5000), lanes);
      } else {
        // As eight failed attempts leave them (the attempt rows do not matter to recovery).
        await sql`
          INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, status, attempts, created_at, updated_at)
          SELECT ${id}, e, ${type}, 'failed', 8, now() - interval '40 minutes', now() - interval '30 minutes'
          FROM unnest(${ids}::uuid[]) e`;
      }
      return id;
    }
    const finished = async (id) =>
      (
        await sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ${id} AND status <> 'pending'`
      )[0].n;
    async function drain(id) {
      const started = performance.now();
      for (;;) {
        await new Promise((r) => setTimeout(r, 100));
        if ((await finished(id)) >= total) return (performance.now() - started) / 1000;
        if (performance.now() - started > 600_000) throw new Error('deliveries did not finish in 10 minutes');
      }
    }

    const failedId = await subscriptionWith('recovered', 'member.created', 'failed');
    // The anchor: as many new deliveries to the same receiver, the plain path, queued before the worker starts.
    const plainId = await subscriptionWith('plain', 'coupon.redeemed', 'pending');
    await sql`VACUUM ANALYZE`;
    const runner = await startWorker({
      connectionString: db.url,
      sql,
      config,
      concurrency: DEFAULT_CONCURRENCY,
    });

    const plainSeconds = await drain(plainId);
    const plainRate = total / plainSeconds;

    // Recovery: the API's service in a transaction, as the route runs it, then the resend.
    const requeueStarted = performance.now();
    const result = await sql.begin((tx) =>
      recoverDeliveries(
        tx,
        { organizationIds: ['org-acme'] },
        failedId,
        { since: new Date(Date.now() - 3600_000).toISOString() },
        lanes,
      ),
    );
    const requeueMs = performance.now() - requeueStarted;
    const resendSeconds = await drain(failedId);
    await runner.stop();

    const recoveredRate = total / resendSeconds;
    const [{ delivered }] = await sql`
      SELECT count(*)::int AS delivered FROM webhook_deliveries
      WHERE subscription_id = ${failedId} AND status = 'delivered' AND attempts = 9`;
    const { requests, ids } = await ask('count');
    const ratio = recoveredRate / plainRate;
    const exactlyOnce =
      result.recovered === total && delivered === total && requests === 2 * total && ids === 2 * total;
    const ok = exactlyOnce && ratio >= targetRatio;
    if (!ok) failed = true;
    console.log(
      `plain delivery (anchor): ${total.toLocaleString('en')} in ${plainSeconds.toFixed(2)} s, ${Math.round(plainRate)}/s`,
    );
    console.log(
      `recover: re-queued ${result.recovered.toLocaleString('en')} failed deliveries in ${requeueMs.toFixed(0)} ms; ` +
        `resent in ${resendSeconds.toFixed(2)} s, ${Math.round(recoveredRate)}/s = ${ratio.toFixed(2)}× the plain rate ` +
        `(target ≥ ${targetRatio}); each once more: ${exactlyOnce ? 'yes' : `NO (${delivered} delivered, ${requests} requests)`} ` +
        `${ok ? 'ok' : 'FAIL'}`,
    );
    console.log(loadLine());
  } finally {
    receiver.kill();
    await db.stop();
  }
  process.exit(failed ? 1 : 0);
}
