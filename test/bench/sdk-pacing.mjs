// Pacing: 2,000 requests fired at once against a server limited to 600 per window must receive
// zero 429s. The local node:http server enforces 600 requests per WINDOW_S seconds (the minute
// shortened) per token, fixed window from the first request, and sends the API's headers
// (X-RateLimit-Limit/Remaining, RateLimit-Policy w=, RateLimit t=, Retry-After on 429).
// Run: npx tsc -b sdk && node test/bench/sdk-pacing.mjs   (WINDOW_S=2 by default)
// Against the reference server instead: start it with LOYALTY_RATE_LIMIT_WINDOW_SECONDS=2, then
// LOYALTY_API_URL=http://127.0.0.1:<port> WINDOW_S=2 node test/bench/sdk-pacing.mjs (demo fixtures' acme-admin client).
// Baseline in the same run: the same burst with plain fetch and no pacing.
// 429s are counted as received by the client (the SDK's retries would otherwise hide them).
import { createServer } from 'node:http';
import { createLoyaltyClient } from '@loyalty/sdk';
import { adminToken } from './lib/admin-token.mjs';

const LIMIT = 600;
const WINDOW_S = Number(process.env.WINDOW_S ?? 2);
const REQUESTS = Number(process.env.REQUESTS ?? 2000);
const windows = new Map();

const server = createServer((req, res) => {
  const token = req.headers.authorization ?? 'ip';
  const now = Date.now();
  let w = windows.get(token);
  if (!w || now >= w.start + WINDOW_S * 1000) {
    w = { start: now, count: 0 };
    windows.set(token, w);
  }
  const resetIn = Math.ceil((w.start + WINDOW_S * 1000 - now) / 1000);
  const headers = {
    'content-type': 'application/json',
    'x-ratelimit-limit': String(LIMIT),
    'ratelimit-policy': `"token";q=${LIMIT};w=${WINDOW_S}`,
  };
  if (w.count >= LIMIT) {
    res.writeHead(429, {
      ...headers,
      'x-ratelimit-remaining': '0',
      'retry-after': String(resetIn),
      ratelimit: `"token";r=0;t=${resetIn}`,
    });
    res.end('{"message":"Too Many Attempts."}');
    return;
  }
  w.count++;
  const remaining = LIMIT - w.count;
  res.writeHead(200, {
    ...headers,
    'x-ratelimit-remaining': String(remaining),
    ratelimit: `"token";r=${remaining};t=${resetIn}`,
  });
  res.end('{"success":true,"data":[]}');
});
const external = process.env.LOYALTY_API_URL;
if (!external) await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
const base = external ?? `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;

/** A client-credentials token from the reference server (each burst gets its own token, so its own budget). */
async function token() {
  return external ? adminToken(base) : `local-${Math.random()}`;
}

let received429 = 0;
const counting = (request) =>
  fetch(request).then((r) => {
    if (r.status === 429) received429++;
    return r;
  });

async function burst(label, send) {
  received429 = 0;
  const start = performance.now();
  const statuses = await Promise.all(Array.from({ length: REQUESTS }, () => send().catch(() => 0)));
  const seconds = (performance.now() - start) / 1000;
  return { label, seconds, rejected: received429, ok: statuses.filter((s) => s === 200).length };
}

// Baseline: plain fetch, no pacing, no retries.
const plainToken = await token();
const plain = await burst('plain fetch', () =>
  counting(new Request(`${base}/tags`, { headers: { authorization: `Bearer ${plainToken}` } })).then((r) => {
    r.body?.cancel();
    return r.status;
  }),
);
if (external) await new Promise((r) => setTimeout(r, WINDOW_S * 1000)); // let the IP/token windows pass
// The SDK: one client, default pacing (it learns the window from RateLimit-Policy), counting what it receives.
const client = createLoyaltyClient({ baseUrl: base, token: await token(), fetch: counting });
const sdk = await burst('sdk client', () => client.GET('/tags').then((r) => r.response.status));

// The least time the limit allows: full windows before the last partial one.
const ideal = (Math.ceil(REQUESTS / LIMIT) - 1) * WINDOW_S;
console.log(
  `${REQUESTS} requests at once, limit ${LIMIT} per ${WINDOW_S} s window, ${external ? `reference server ${external}` : 'local node:http server'}, node ${process.version}`,
);
for (const r of [plain, sdk])
  console.log(
    `${r.label}: ${r.ok} ok, 429s received ${r.rejected}, ${r.seconds.toFixed(2)} s (${(r.seconds / ideal).toFixed(2)}x the ${ideal} s the limit allows)`,
  );
console.log(`target zero 429s with the SDK: ${sdk.rejected === 0 && sdk.ok === REQUESTS ? 'met' : 'NOT met'}`);
if (!external) server.close();
process.exitCode = sdk.rejected === 0 && sdk.ok === REQUESTS ? 0 : 1;
