// Per-call overhead of the SDK client against plain fetch, over a local node:http server.
// Run: npx tsc -b sdk && node test/bench/sdk-overhead.mjs   (target: client within 10% of plain fetch)
// The server sends the rate-limit headers the API sends (with a limit never reached), so pacing
// does its bookkeeping as in production. Both sides parse the JSON response.
import { createServer } from 'node:http';
import { createLoyaltyClient } from '@loyalty/sdk';

const CALLS = Number(process.env.CALLS ?? 4000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const ROUNDS = 5;
const payload = JSON.stringify({ success: true, data: [{ tag: 'VIP', external_reference: 'vip', uuid: '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f', created_at: '2026-11-21T10:15:30.000Z', updated_at: '2026-11-21T10:15:30.000Z', brand_id: 'brand-acme' }] });
let remaining = 1e9;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(req.method === 'POST' ? 201 : 200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': '1000000000',
      'x-ratelimit-remaining': String(--remaining),
      'ratelimit-policy': '"token";q=1000000000;w=60',
    });
    res.end(payload);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const token = 'bench-token';
const client = createLoyaltyClient({ baseUrl: base, token });
const tagBody = JSON.stringify({ brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' });

const variants = {
  'GET plain fetch': () =>
    fetch(`${base}/tags`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }).then((r) => r.json()),
  'GET client': () => client.GET('/tags'),
  'POST plain fetch': () =>
    fetch(`${base}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: tagBody,
    }).then((r) => r.json()),
  'POST client': () => client.POST('/tags', { body: { brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' } }),
};

async function run(fn) {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < CALLS) await fn();
    }),
  );
  return (performance.now() - start) / CALLS; // ms per call
}

for (const fn of Object.values(variants)) await run(fn); // warm up
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
// Interleave the variants round by round so load on the machine hits them alike.
for (let round = 0; round < ROUNDS; round++) for (const [name, fn] of Object.entries(variants)) samples[name].push(await run(fn));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;
console.log(`${CALLS} calls x ${ROUNDS} rounds, ${CONCURRENCY} in flight, node ${process.version}`);
let worst = 0;
for (const method of ['GET', 'POST']) {
  const plain = median(samples[`${method} plain fetch`]);
  const sdk = median(samples[`${method} client`]);
  const ratio = sdk / plain;
  worst = Math.max(worst, ratio);
  console.log(`${method}: plain fetch ${us(plain)}/call, client ${us(sdk)}/call, ratio ${ratio.toFixed(3)} (overhead ${us(sdk - plain)})`);
}
console.log(`target ratio <= 1.10: ${worst <= 1.1 ? 'met' : 'NOT met'}`);
server.close();
process.exitCode = worst <= 1.1 ? 0 : 1;
