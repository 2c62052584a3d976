// Points import benchmark: `loyalty points import` of ROWS balances (default 100,000) through the
// built binary against the built server (its own process, worker included) on a fresh embedded
// PostgreSQL, beside a floor measured in the same run.
//
// The members exist and hold no pass of the storecard yet (the migration's usual start: members
// imported first), so every row costs the import two API calls, one pass issued and one scan;
// there is no bulk endpoint for either. The floor is that unavoidable API work done by the thinnest
// client: a bare loop with the SDK issuing the pass and sending the earn scan for ROWS other
// members, as many in flight as the import (--concurrency 8), half before the import and half after. The ratio import/floor is what the
// CLI adds: reading and checking the file, the member list and pass export, the plan, the
// checkpoints, the progress. Both sets of members are seeded by COPY (as cli-import.mjs does),
// 2 × ROWS members in the demo brand; the floor runs first, so the import's member list holds both.
//
// The per-token rate limit is raised so that it cannot bound the run (at the default 600 requests
// a minute, 100,000 rows would take 5.6 hours): this measures the import, not the limit.
//
//   npx tsc -b && node test/bench/points-import.mjs        (ROWS=100000, CONCURRENCY=8)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLoyaltyClient, toLoyaltyError } from '@loyalty/sdk';
import { adminToken } from './lib/admin-token.mjs';
import { loadLine, startBenchDatabase } from './lib/bench-database.mjs';
import { cliEnv, runCli } from './lib/cli-process.mjs';
import { copySignups } from './lib/copy-anchor.mjs';
import { startServerProcess } from './lib/server-process.mjs';
import { summaryRow } from './lib/summary.mjs';

const rows = Number(process.env.ROWS ?? 100_000);
const concurrency = Number(process.env.CONCURRENCY ?? 8);
/** Goal: the import within 1.5 × the bare loop's time. */
const goalRatio = 1.5;
const work = mkdtempSync(join(tmpdir(), 'loyalty-bench-points-'));
const env = cliEnv(join(work, 'config'));
const run = Date.now().toString(36);

const db = await startBenchDatabase({ max: 4 });
let server;
try {
  server = await startServerProcess({
    databaseUrl: db.url,
    env: { LOYALTY_RATE_LIMIT_TOKEN: '1000000000', LOYALTY_RATE_LIMIT_IP: '1000000000' },
  });
  const users = (tag) =>
    Array.from({ length: rows }, (_, i) => ({
      email: `${tag}-${run}-${i}@example.com`,
      first_name: 'F',
      last_name: 'L',
    }));
  const floorUsers = users('floor');
  const importUsers = users('points');
  await copySignups(db.sql, { organizationId: 'org-acme', brandId: 'brand-acme', users: floorUsers });
  await copySignups(db.sql, { organizationId: 'org-acme', brandId: 'brand-acme', users: importUsers });
  const uuidOf = new Map(
    (await db.sql`SELECT id, email FROM members WHERE email LIKE ${`floor-${run}-%`}`).map((r) => [r.email, r.id]),
  );

  // The floor: per member, POST /members/{uuid}/passes and POST /passes/scan/storecard, `concurrency`
  // at once; half of its members before the import and half after (a shared machine's load moves).
  const client = createLoyaltyClient({ baseUrl: server.url, token: await adminToken(server.url) });
  const floorLoop = async (from, to) => {
    const started = performance.now();
    let next = from;
    const worker = async () => {
      while (next < to) {
        const i = next++;
        const uuid = uuidOf.get(floorUsers[i].email);
        const issued = await client.POST('/members/{uuid}/passes', {
          params: { path: { uuid } },
          body: { brand_id: 'brand-acme', storecard_id: 'card-points' },
        });
        if (toLoyaltyError(issued)) throw toLoyaltyError(issued);
        const scanned = await client.POST('/passes/scan/storecard', {
          body: {
            pass_code: issued.data.pass_code,
            brand_id: 'brand-acme',
            type: 'earn',
            points: 1 + (i % 500),
            transaction_reference: `floor-${run}-${i}`,
          },
        });
        if (toLoyaltyError(scanned)) throw toLoyaltyError(scanned);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return (performance.now() - started) / 1000;
  };
  const half = Math.floor(rows / 2);
  const floorBefore = await floorLoop(0, half);

  const file = join(work, 'balances.csv');
  const lines = ['email,storecard,points', ...importUsers.map((u, i) => `${u.email},card-points,${1 + (i % 500)}`)];
  writeFileSync(file, `${lines.join('\n')}\n`);
  const login = await runCli(
    ['login', '--api-url', server.url, '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
    { env, input: 'acme-admin-secret' },
  );
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  const result = await runCli(
    ['points', 'import', file, '--set', '--json', '--no-progress', '--concurrency', String(concurrency)],
    { env, timeoutMs: 3_600_000 },
  );
  if (result.code !== 0) throw new Error(`points import exited ${result.code}:\n${result.stderr}`);
  const summary = JSON.parse(result.stdout);
  const now = result.ms / 1000;
  const floorAfter = await floorLoop(half, rows);
  const floor = floorBefore + floorAfter;
  const [credited] = await db.sql`
    SELECT count(*)::int AS passes, sum(p.balance)::bigint AS balance FROM passes p JOIN members m ON m.id = p.member_id
    WHERE p.storecard_id = 'card-points' AND m.email LIKE ${`points-${run}-%`}`;
  const expected = importUsers.reduce((sum, _, i) => sum + 1 + (i % 500), 0);

  console.log(`node ${process.version}; server ${server.url}`);
  console.log(
    `rows            ${rows.toLocaleString('en-US')} (created ${summary.created}, adjusted ${summary.adjusted}, unchanged ${summary.unchanged}, rejected ${summary.rejected})`,
  );
  console.log(
    `import          ${now.toFixed(1)} s, process start to exit (${Math.round(rows / now)} rows/s), --set, ${concurrency} in flight`,
  );
  console.log(`CLI peak RSS    ${(result.peakRss / 1024 / 1024).toFixed(0)} MB`);
  console.log(
    `floor           ${floor.toFixed(1)} s: a bare SDK loop issuing ${rows.toLocaleString('en-US')} passes and sending as many earn scans, ${concurrency} in flight (${Math.round(rows / floor)} rows/s; ${floorBefore.toFixed(1)} s for the first half before the import, ${floorAfter.toFixed(1)} s for the second after it)`,
  );
  console.log(`import/floor    ${(now / floor).toFixed(2)}x`);
  console.log(
    `balances        ${credited.passes} passes, ${credited.balance} points (expected ${rows} and ${expected})`,
  );
  console.log(loadLine());
  const met = summaryRow({
    id: 'points-import-100k',
    measure: `\`loyalty points import --set\`, ${rows / 1000}k rows`,
    unit: 's',
    now,
    anchor: floor,
    anchorLabel: 'bare SDK loop: pass + scan per row',
    goal: goalRatio,
    goalOn: 'ratio',
    better: 'lower',
  });
  const exact = credited.passes === rows && Number(credited.balance) === expected;
  console.log(
    `goal            ${met && exact ? 'met' : 'MISSED'}: within ${goalRatio}x the floor, every balance exact`,
  );
  process.exitCode = met && exact ? 0 : 1;
} finally {
  await server?.stop();
  await db.stop();
  if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
}
process.exit(process.exitCode ?? 0);
