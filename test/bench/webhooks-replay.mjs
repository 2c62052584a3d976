// Replay of what a subscription missed (issue 29): POST /webhook-subscriptions/{id}/replay-missing
// of 10,000 events for a subscription created after them, timed as the replay (the service's one
// statement and the lanes' wake-up) and as the delivery of the replayed events to a local receiver
// in its own process, beside the plain delivery rate of as many fanned-out events measured in the
// same run, on the same database, worker and receiver. A second replay of the window must create
// nothing, and the receiver must see each replayed event exactly once.
// Run after building: `npx tsc -b server && node test/bench/webhooks-replay.mjs` (or `npm run bench`).
// BENCH_DELIVERIES (default 10000).

if (process.argv[2] === 'receiver') {
  const { createServer } = await import('node:http');
  /** Requests per message id, by path: a replayed event must arrive once. */
  const seen = new Map();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = `${req.url} ${req.headers['loyalty-message-id']}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () =>
    process.send({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }),
  );
  process.on('message', (m) => {
    if (m !== 'count') return;
    const replayed = [...seen].filter(([key]) => key.startsWith('/replayed '));
    process.send({ requests: replayed.reduce((a, [, n]) => a + n, 0), ids: replayed.length });
  });
} else {
  const { loadConfig, startWorker, DEFAULT_CONCURRENCY, serverModule } = await import('./lib/server-dist.mjs');
  const { startBenchDatabase, loadLine } = await import('./lib/bench-database.mjs');
  const { fanOutEvents } = await serverModule('services/webhooks/deliveries.js');
  const { replayMissingEvents } = await serverModule('services/webhooks/deliveries-replay.js');
  const { summaryRow } = await import('./lib/summary.mjs');

  const total = Number(process.env.BENCH_DELIVERIES ?? 10_000);
  /** The replayed events are delivered at least at this share of the plain delivery rate. */
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
    const scope = { organizationIds: ['org-acme'] };

    const subscribe = async (name, type, createdAt) =>
      (
        await sql`
        INSERT INTO webhook_subscriptions (organization_id, url, events, secret, created_at)
        VALUES ('org-acme', ${`http://127.0.0.1:${port}/${name}`}, ${[type]}, ${secret}, ${createdAt})
        RETURNING id`
      )[0].id;
    const events = async (type) =>
      (
        await sql`
        INSERT INTO events (organization_id, type, data)
        SELECT 'org-acme', ${type}, jsonb_build_object('coupon_id', 'coupon-welcome', 'pass_id', gen_random_uuid(),
                 'member_id', gen_random_uuid(), 'brand_id', 'brand-acme', 'redeemed_at', now())
        FROM generate_series(1, ${total}::int) RETURNING id`
      ).map((r) => r.id);
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

    // The anchor: `total` events fanned out to a subscription that existed then (the plain path).
    const plainId = await subscribe('plain', 'coupon.redeemed', new Date(Date.now() - 3600_000));
    const plainEvents = await events('coupon.redeemed');
    for (let i = 0; i < plainEvents.length; i += 5000) await fanOutEvents(sql, plainEvents.slice(i, i + 5000), lanes);
    // The replayed: `total` events of another type, recorded before their subscription existed.
    const since = new Date(Date.now() - 1000);
    await events('coupon.issued');
    const replayedId = await subscribe('replayed', 'coupon.issued', new Date());
    await sql`VACUUM ANALYZE`;

    const runner = await startWorker({ connectionString: db.url, sql, config, concurrency: DEFAULT_CONCURRENCY });
    const plainSeconds = await drain(plainId);
    const plainRate = total / plainSeconds;

    // The replay: the API's service in a transaction, as the route runs it, then the delivery.
    const replay = () =>
      sql.begin((tx) =>
        replayMissingEvents(tx, scope, replayedId, { since: since.toISOString() }, { lanes, retentionDays: 30 }),
      );
    const replayStarted = performance.now();
    const first = await replay();
    const replayMs = performance.now() - replayStarted;
    const replaySeconds = await drain(replayedId);
    const second = await replay();
    await runner.stop();

    const replayRate = total / replaySeconds;
    const [{ delivered }] = await sql`
      SELECT count(*)::int AS delivered FROM webhook_deliveries
      WHERE subscription_id = ${replayedId} AND status = 'delivered' AND attempts = 1`;
    const { requests, ids } = await ask('count');
    const ratio = replayRate / plainRate;
    const exactlyOnce =
      first.replayed === total && second.replayed === 0 && delivered === total && requests === total && ids === total;
    console.log(
      `plain delivery (anchor): ${total.toLocaleString('en')} fanned-out events in ${plainSeconds.toFixed(2)} s, ${Math.round(plainRate)}/s`,
    );
    console.log(
      `replay-missing: ${first.replayed.toLocaleString('en')} missed events queued in ${replayMs.toFixed(0)} ms; ` +
        `delivered in ${replaySeconds.toFixed(2)} s, ${Math.round(replayRate)}/s = ${ratio.toFixed(2)}× the plain rate ` +
        `(target ≥ ${targetRatio}); a second replay queued ${second.replayed}; each exactly once: ` +
        `${exactlyOnce ? 'yes' : `NO (${delivered} delivered, ${requests} requests for ${ids} ids)`}`,
    );
    const met = summaryRow({
      id: 'replay-missing-10k',
      measure: 'replay-missing, 10,000 events delivered',
      unit: '/s',
      now: replayRate,
      anchor: plainRate,
      anchorLabel: 'plain fan-out delivery',
      goal: targetRatio,
      goalOn: 'ratio',
      better: 'higher',
    });
    if (!met || !exactlyOnce) failed = true;
    console.log(loadLine());
  } finally {
    receiver.kill();
    await db.stop();
  }
  process.exit(failed ? 1 : 0);
}
