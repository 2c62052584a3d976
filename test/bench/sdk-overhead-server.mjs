// Per-call overhead of the SDK client against plain fetch, over the local reference server (issue 6:
// "per-call overhead of the client against a local server: within 10% of plain fetch").
// sdk-overhead.mjs measures the same calls against a no-op node:http server, the floor where the
// client's JavaScript is largest beside fetch's own; this one measures them against the API they
// are made for: `npm start`'s server (embedded PostgreSQL, auth, rate limiting, idempotency keys)
// in its own process. Calls: GET /tags, and POST /members for a known e-mail (200, nothing
// changes; each call carries a new Idempotency-Key, so the server stores each response, for
// both variants alike). Run: npm run build && node test/bench/sdk-overhead-server.mjs
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLoyaltyClient } from '@loyalty/sdk';
import { compare, sampleVariants } from './lib/overhead.mjs';
import { root, adminToken } from './lib/server-dist.mjs';
import { startServerProcess } from './lib/server-process.mjs';

const CALLS = Number(process.env.CALLS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 11);
const target = 1.1;

const dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-'));
await chmod(dir, 0o755); // as root, PostgreSQL runs as `postgres` and must reach its data directory
// The server's output goes to a file, never through this process (lib/server-process.mjs).
const server = await startServerProcess({
  argv: [path.join(root, 'server/dist/start.js')],
  env: {
    LOYALTY_DATA_DIR: path.join(dir, 'data'),
    LOYALTY_WORKER: 'off',
    LOYALTY_RATE_LIMIT_TOKEN: '1000000000',
    LOYALTY_RATE_LIMIT_IP: '1000000000',
  },
});
let exitCode = 1;
try {
  const base = server.url;
  const token = await adminToken(base);
  const client = createLoyaltyClient({ baseUrl: base, token });
  const member = { brand_id: 'brand-acme', email: 'overhead@example.org' };
  const first = await client.POST('/members', { body: member });
  if (first.response.status !== 201) throw new Error(`POST /members: ${first.response.status}`);

  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  const check = (status) => (r) => {
    if (r.status !== status) throw new Error(`unexpected ${r.status}`);
    return r.json();
  };
  const variants = {
    'GET plain fetch': () => fetch(`${base}/tags`, { headers }).then(check(200)),
    'GET client': () =>
      client.GET('/tags').then((r) => {
        if (r.error) throw new Error(JSON.stringify(r.error));
      }),
    'POST plain fetch': () =>
      fetch(`${base}/members`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify(member),
      }).then(check(200)),
    'POST client': () =>
      client.POST('/members', { body: member }).then((r) => {
        if (r.error) throw new Error(JSON.stringify(r.error));
      }),
  };
  const samples = await sampleVariants(variants, { calls: CALLS, concurrency: CONCURRENCY, rounds: ROUNDS });
  console.log(
    `reference server (embedded PostgreSQL, own process): ${CALLS} calls x ${ROUNDS} rounds, ${CONCURRENCY} in flight, node ${process.version}`,
  );
  // Judged, as sdk-overhead.mjs is, by the ratio of the medians; the median of the per-round
  // ratios is printed beside it (on a shared machine the two differ by a few percent either way).
  const worst = Math.max(compare(samples, 'GET', 'GET /tags').ratio, compare(samples, 'POST', 'POST /members').ratio);
  console.log(`target wall ratio <= ${target.toFixed(2)}: ${worst.toFixed(3)}, ${worst <= target ? 'met' : 'NOT met'}`);
  exitCode = worst <= target ? 0 : 1;
} catch (error) {
  console.error(error);
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(exitCode);
