// Apple Wallet passes (issue 28): how fast the server signs a `.pkpass`, and what a download costs
// beside the wallet page's, in the same run:
//   1. builds per second, cold: every pass a new version (pass.json, images from the brand's
//      cache, manifest, PKCS #7 signature, zip), in this process, no HTTP;
//   2. builds per second, cached: the same versions again (the ETag's hash and a cache hit);
//   3. GET /wallet/{code}.pkpass (a cached version) and GET /wallet/{code} (the HTML page with its
//      QR code drawn per request) under autocannon, alternating, as p50/p99 and their ratios.
// Run after building: `npx tsc -b server && node test/bench/wallet-pkpass.mjs` (or `npm run bench -- wallet`).
// BENCH_PASSES (default 1000) passes are built cold. Exit 1 when the download's p99 is more than
// 1.5× the page's, or any pass does not build.
import path from 'node:path';
import { benchConnections as connections, benchSeconds as seconds, cannon } from './lib/cannon.mjs';
import { loadLine, startBenchDatabase } from './lib/bench-database.mjs';
import { createServer, loadConfig, serverModule } from './lib/server-dist.mjs';
import { summaryRow } from './lib/summary.mjs';

const passes = Number(process.env.BENCH_PASSES ?? 1000);
const goal = 1.5;

const db = await startBenchDatabase();
const { sql } = db;
let api;
let failed = false;
try {
  await sql`
    WITH m AS (
      INSERT INTO members (organization_id, email)
      SELECT 'org-acme', 'pkpass-' || i || '@example.test' FROM generate_series(1, ${passes}::int) i RETURNING id
    )
    INSERT INTO passes (organization_id, brand_id, member_id, kind, storecard_id, pass_code, qr_code, points, balance)
    SELECT 'org-acme', 'brand-acme', id, 'storecard', 'card-points', code, code, 120, 70
    FROM (SELECT id, upper(substr(md5(id::text), 1, 16)) AS code FROM m) c`;

  const config = {
    ...loadConfig({ LOYALTY_SECRET_KEY: 'bench-only key of webhook secrets at rest' }),
    port: 0,
    host: '127.0.0.1',
    sandbox: true,
    dataDir: path.join(db.dir, 'loyalty'),
    rateLimitToken: 1_000_000_000,
    rateLimitIp: 1_000_000_000,
  };
  const { findWalletPass } = await serverModule('services/wallet/wallet-pass.js');
  const { pkpassFor } = await serverModule('services/wallet/pkpass.js');
  const codes = (await sql`SELECT pass_code FROM passes ORDER BY pass_code`).map((r) => r.pass_code);
  const rows = await Promise.all(codes.map((code) => findWalletPass(sql, code)));
  const app = { config, baseUrl: () => 'http://127.0.0.1:3000' };

  // The signing material (the sandbox CA, generated once) and the JIT: a few builds before timing.
  for (const pass of rows.slice(0, 20)) await pkpassFor(app, { ...pass, updated_at: new Date(0).toISOString() });
  const timed = async (list) => {
    const started = performance.now();
    let bytes = 0;
    for (const pass of list) bytes += (await pkpassFor(app, pass)).body.length;
    const ms = performance.now() - started;
    return { perSecond: (list.length / ms) * 1000, ms, bytes };
  };
  const cold = await timed(rows);
  const cached = await timed(rows);
  if (cold.bytes !== cached.bytes) throw new Error('the cached passes differ from the built ones');

  api = await createServer({ sql, config, log: (line) => console.error(line) });
  await api.start();
  const code = codes[0];
  const pkpassUrl = `${api.info.uri}/wallet/${code}.pkpass`;
  const pageUrl = `${api.info.uri}/wallet/${code}`;
  const head = await fetch(pkpassUrl);
  if (head.status !== 200 || head.headers.get('content-type') !== 'application/vnd.apple.pkpass')
    throw new Error(`GET ${pkpassUrl}: ${head.status} ${head.headers.get('content-type')}`);
  await head.arrayBuffer();

  await cannon(pageUrl, { duration: 2 });
  await cannon(pkpassUrl, { duration: 2 });
  const runs = { page: [], pkpass: [] };
  for (let round = 0; round < 2; round++) {
    runs.page.push(await cannon(pageUrl));
    runs.pkpass.push(await cannon(pkpassUrl));
  }
  const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  const summary = (list) => ({ rps: mean(list, 'rps'), p50: mean(list, 'p50'), p99: mean(list, 'p99') });
  const page = summary(runs.page);
  const pkpass = summary(runs.pkpass);

  console.log(
    `wallet-pkpass: ${passes} storecard passes; ${connections} connections, ${seconds} s per run, mean of 2 alternating runs (node ${process.version})`,
  );
  console.log(
    `builds, cold (sign each new version)   ${cold.perSecond.toFixed(0).padStart(7)} passes/s  (${(cold.ms / passes).toFixed(2)} ms each, ${(cold.bytes / passes / 1024).toFixed(1)} KiB)`,
  );
  console.log(`builds, cached (same versions again)   ${cached.perSecond.toFixed(0).padStart(7)} passes/s`);
  console.log(`cold / cached time per pass: ${(cold.ms / cached.ms).toFixed(1)}×`);
  const line = (name, r) =>
    `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(1).padStart(5)} ms   p99 ${r.p99.toFixed(1).padStart(5)} ms`;
  console.log(line('GET /wallet/{code} (page)', page));
  console.log(line('GET /wallet/{code}.pkpass (cached)', pkpass));
  const p50Ratio = pkpass.p50 / page.p50;
  const p99Ratio = pkpass.p99 / page.p99;
  console.log(
    `ratio .pkpass / page: p50 ${p50Ratio.toFixed(2)}, p99 ${p99Ratio.toFixed(2)}, req/s ${(pkpass.rps / page.rps).toFixed(2)} (goal p99 ≤ ${goal})`,
  );
  console.log(loadLine());
  const met = summaryRow({
    id: 'wallet-pkpass-p99',
    measure: '.pkpass download p99 (cached version)',
    unit: 'ms',
    now: pkpass.p99,
    anchor: page.p99,
    anchorLabel: 'the wallet page, same pass',
    goal,
    goalOn: 'ratio',
    better: 'lower',
  });
  if (!met) {
    console.log(`FAIL: the .pkpass p99 is ${p99Ratio.toFixed(2)}× the page's (goal ≤ ${goal})`);
    failed = true;
  }
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  await api?.stop();
  await db.stop();
}
process.exitCode = failed ? 1 : 0;
