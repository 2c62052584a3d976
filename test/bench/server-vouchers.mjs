// A voucher job over a tag of 100,000 members, through the real API and the real graphile-worker
// runner on an embedded PostgreSQL (durable settings, as `npm start` runs it), judged as ratios to
// floors measured in the same run (issue 30):
//   - the floor (lib/voucher-copy-floor.mjs): a COPY of the rows the job writes (the passes, the
//     grants and the `coupon.issued` events of a fresh coupon over the same members) into the same
//     tables, every index, constraint and trigger in place, the rows made beforehand in this
//     process; measured before and after the jobs, the quicker is the floor;
//   1. coupon passes, nobody subscribed: goal `voucher-100k` ≤ 1.3× the floor;
//   (the rerun of job 1, which skips everyone);
//   2. another coupon with one `coupon.issued` subscription, counted until every delivery exists,
//      due, and the subscription's delivery lanes are queued (the worker sends nothing meanwhile,
//      so the figure is the cost of the job plus the fan-out; server-webhooks.mjs measures the
//      sending): goal `voucher-100k-subscribed` ≤ 1.15× job 1 of the same run; shown beside it,
//      as information, the ratio to a COPY of the same rows with their deliveries;
//   and as information, issue 17's anchor: "the rounds' SQL alone" (lib/voucher-rounds-sql.mjs),
//   the rounds' statements sent directly with postgres.js (no HTTP, no worker).
// Run after building: `npx tsc -b server && node test/bench/server-vouchers.mjs` (or `npm run bench`).
// BENCH_MEMBERS (default 100000) sets the tag's size (e.g. BENCH_MEMBERS=20000 for a short run;
// the summary ids stay `voucher-100k*`, the measure names the size). Exit 1 when a goal is missed
// or the passes are not one per member and coupon.
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import {
  root,
  createServer,
  loadConfig,
  startEmbeddedPostgres,
  migrate,
  createPool,
  loadFixtureCatalogue,
  startWorker,
} from './lib/server-dist.mjs';
import { summaryRow } from './lib/summary.mjs';
import { copyVoucherRows } from './lib/voucher-copy-floor.mjs';
import { roundsSqlAlone } from './lib/voucher-rounds-sql.mjs';

const members = Number(process.env.BENCH_MEMBERS ?? 100_000);

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data') });
const sql = createPool(pg.url, { max: 20 });
let api;
let failed = false;
try {
  await migrate(sql, pg.url);
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  await sql`INSERT INTO coupons (id, organization_id, brand_id, title, valid_days, active)
            VALUES ('coupon-bench', 'org-acme', 'brand-acme', 'Bench coupon', 30, true),
                   ('coupon-anchor', 'org-acme', 'brand-acme', 'Anchor coupon', 30, true),
                   ('coupon-floor', 'org-acme', 'brand-acme', 'Floor coupon', 30, true),
                   ('coupon-floor-2', 'org-acme', 'brand-acme', 'Floor coupon 2', 30, true),
                   ('coupon-floor-subscribed', 'org-acme', 'brand-acme', 'Floor coupon, subscribed', 30, true)`;
  const [tag] = await sql`INSERT INTO tags (organization_id, brand_id, tag, external_reference)
                          VALUES ('org-acme', 'brand-acme', 'Everyone', 'everyone') RETURNING id`;
  const seeded = performance.now();
  await sql`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT 'org-acme', 'bench-' || i || '@example.test' FROM generate_series(1, ${members}::int) i RETURNING id
    ), bm AS (INSERT INTO brand_members (brand_id, member_id) SELECT 'brand-acme', id FROM m)
    INSERT INTO tag_members (tag_id, member_id) SELECT ${tag.id}, id FROM m`;
  await sql`VACUUM ANALYZE`;
  console.log(`seeded ${members} members on one tag in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);

  const config = {
    ...loadConfig({ LOYALTY_SECRET_KEY: 'bench-only key of webhook secrets at rest' }),
    port: 0,
    host: '127.0.0.1',
    rateLimitToken: 1e9,
    rateLimitIp: 1e9,
    webhookAllowInsecure: true,
  };
  api = await createServer({ sql, config, log: (line) => console.error(line) });
  await api.start();
  const token = await (
    await fetch(`${api.info.uri}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: 'acme-admin',
        client_secret: 'acme-admin-secret',
      }),
    })
  ).json();
  const headers = { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };

  // Sending is measured elsewhere: this worker issues vouchers and fans out, nothing more.
  const runner = await startWorker({
    connectionString: pg.url,
    sql,
    config,
    only: ['issue_voucher_round', 'fan_out_events'],
    pollInterval: 100,
  });

  // CPU seconds spent by PostgreSQL (every process of the cluster) and by this process: unlike
  // wall time, hardly changed by other work on the machine.
  const [{ postmaster }] =
    await sql`SELECT pid AS postmaster FROM pg_stat_activity WHERE backend_type = 'checkpointer'`;
  const ppid = Number(readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  const clusterCpu = () => {
    let ms = 0;
    for (const pid of readFileSync(`/proc/${ppid}/task/${ppid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .concat(String(ppid))) {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        ms += (Number(f[11]) + Number(f[12])) * 10;
      } catch {
        /* exited */
      }
    }
    return ms;
  };
  const cpuNow = () => ({ pg: clusterCpu(), node: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 });

  async function job(couponId, { untilDeliveries = 0 } = {}) {
    const cpu0 = cpuNow();
    const started = performance.now();
    const res = await fetch(`${api.info.uri}/tags/everyone/vouchers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ brand_id: 'brand-acme', coupon_id: couponId }),
    });
    if (res.status !== 202) throw new Error(`POST vouchers: ${res.status} ${await res.text()}`);
    const { job_id } = await res.json();
    let body;
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      body = await (
        await fetch(`${api.info.uri}/tags/everyone/vouchers/${job_id}?brand_id=brand-acme`, { headers })
      ).json();
      if (body.status === 'failed') throw new Error(`job failed: ${JSON.stringify(body)}`);
      if (body.status !== 'done') continue;
      if (!untilDeliveries) break;
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM webhook_deliveries`;
      const [{ q }] =
        await sql`SELECT count(*)::int AS q FROM graphile_worker.jobs WHERE task_identifier = 'deliver_webhook'`;
      if (n >= untilDeliveries && q >= 1) break;
    }
    const cpu1 = cpuNow();
    return {
      seconds: (performance.now() - started) / 1000,
      body,
      cpu: { pg: (cpu1.pg - cpu0.pg) / 1000, node: (cpu1.node - cpu0.node) / 1000 },
    };
  }

  const report = (label, { seconds, body, cpu }, count) => {
    console.log(
      `${label}: ${seconds.toFixed(2)} s, ${Math.round(count / seconds).toLocaleString('en')} passes/s ` +
        `(issued ${body.issued}, skipped ${body.skipped}, failed ${body.failed}); CPU ${cpu.pg.toFixed(1)} s PostgreSQL + ` +
        `${cpu.node.toFixed(1)} s Node`,
    );
  };

  // The floor, on the same members, before the jobs and again after them (a fresh coupon each
  // time; the quicker of the two is the floor: the machine is shared, and the first run also
  // meets the seeding's checkpoint).
  const floors = [];
  const measureFloor = async (couponId, label, subscriptionIds = []) => {
    const cpuA = cpuNow();
    const result = await copyVoucherRows(sql, {
      organizationId: 'org-acme',
      brandId: 'brand-acme',
      tagId: tag.id,
      couponId,
      validDays: 30,
      subscriptionIds,
    });
    const cpuB = cpuNow();
    console.log(
      `floor (${label}), COPY of the job's rows (${result.members} passes, grants and events` +
        `${subscriptionIds.length ? `, ${result.deliveries} deliveries` : ''}): ${result.seconds.toFixed(2)} s; ` +
        `CPU ${((cpuB.pg - cpuA.pg) / 1000).toFixed(1)} s PostgreSQL + ${((cpuB.node - cpuA.node) / 1000).toFixed(1)} s Node`,
    );
    if (result.members !== members) {
      failed = true;
      console.log(`FAIL: the floor wrote ${result.members} passes, not ${members}`);
    }
    return result.seconds;
  };
  floors.push(await measureFloor('coupon-floor', 'before the jobs'));
  await sql`VACUUM ANALYZE`;

  const plain = await job('coupon-welcome');
  report(`voucher job, ${members.toLocaleString('en')} members`, plain, members);

  const rerun = await job('coupon-welcome');
  console.log(
    `rerun of the first job (everyone skipped): ${rerun.seconds.toFixed(2)} s, skipped ${rerun.body.skipped}`,
  );

  const subscribe = await fetch(`${api.info.uri}/webhook-subscriptions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: 'http://127.0.0.1:9/unused', events: ['coupon.issued'] }),
  });
  if (subscribe.status !== 201)
    throw new Error(`POST webhook-subscriptions: ${subscribe.status} ${await subscribe.text()}`);
  const [subscription] = await sql`SELECT id FROM webhook_subscriptions WHERE organization_id = 'org-acme'`;
  const subscribed = await job('coupon-bench', { untilDeliveries: members });
  report('same, with one coupon.issued subscription (deliveries created and queued)', subscribed, members);

  const [{ passes, distinct }] =
    await sql`SELECT count(*)::int AS passes, count(DISTINCT (member_id, coupon_id))::int AS distinct FROM passes`;
  if (passes !== 3 * members || distinct !== 3 * members) {
    failed = true;
    console.log(
      `FAIL: expected ${3 * members} passes (the first floor's and two jobs'), one per member and coupon; found ${passes} (${distinct} distinct)`,
    );
  }
  await runner.stop();
  floors.push(await measureFloor('coupon-floor-2', 'after the jobs'));
  const floorSubscribed = await measureFloor('coupon-floor-subscribed', 'with the deliveries of the subscription', [
    subscription.id,
  ]);
  // Issue 17's anchor, as information only: not a floor (it is the rounds' own statements).
  const cpuA = cpuNow();
  const old = await roundsSqlAlone(sql, {
    organizationId: 'org-acme',
    brandId: 'brand-acme',
    tagId: tag.id,
    couponId: 'coupon-anchor',
  });
  const cpuB = cpuNow();
  report(
    "information: issue 17's anchor, the rounds' SQL alone (postgres.js, no HTTP, no worker)",
    {
      seconds: old.seconds,
      body: { issued: old.issued, skipped: old.processed - old.issued, failed: 0 },
      cpu: { pg: (cpuB.pg - cpuA.pg) / 1000, node: (cpuB.node - cpuA.node) / 1000 },
    },
    members,
  );
  const floor = Math.min(...floors);
  console.log(
    `ratios: plain ${(plain.seconds / floor).toFixed(2)}× the COPY floor (${floor.toFixed(2)} s); ` +
      `subscribed ${(subscribed.seconds / plain.seconds).toFixed(2)}× the job without a subscription, ` +
      `${(subscribed.seconds / floorSubscribed).toFixed(2)}× a COPY with the deliveries (${floorSubscribed.toFixed(2)} s); ` +
      `information: ${(plain.seconds / old.seconds).toFixed(2)}× plain and ${(subscribed.seconds / old.seconds).toFixed(2)}× ` +
      `subscribed to the rounds' SQL alone (${old.seconds.toFixed(2)} s)`,
  );
  const size =
    members % 1e6 === 0
      ? `${members / 1e6}M`
      : members % 1000 === 0
        ? `${members / 1000}k`
        : members.toLocaleString('en');
  const row = { unit: 's', goalOn: /** @type {const} */ ('ratio'), better: /** @type {const} */ ('lower') };
  const plainMet = summaryRow({
    ...row,
    id: 'voucher-100k',
    measure: `voucher job, ${size} members`,
    now: plain.seconds,
    anchor: floor,
    anchorLabel: "COPY of the job's passes, grants and events",
    goal: 1.3,
  });
  const subscribedMet = summaryRow({
    ...row,
    id: 'voucher-100k-subscribed',
    measure: `voucher job, ${size} members, one coupon.issued subscription`,
    now: subscribed.seconds,
    anchor: plain.seconds,
    anchorLabel: 'the same job without a subscription (voucher-100k)',
    goal: 1.15,
  });
  if (!plainMet || !subscribedMet) failed = true;
  // Other processes on the machine change these figures: say how busy it was.
  console.log(
    `load average during the run: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (${os.cpus().length} CPUs)`,
  );
} finally {
  await api?.stop();
  await sql.end({ timeout: 5 });
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
