// Per-call overhead of the SDK client against plain fetch, over a no-op local node:http server:
// the floor, where a call costs fetch's own work and the client's JavaScript is most visible.
// Run: npx tsc -b sdk && node test/bench/sdk-overhead.mjs   (reported; the 10% target is
// judged against the reference server by sdk-overhead-server.mjs)
// The server runs in its own process (as an API would), sends the rate-limit headers the API
// sends (with a limit never reached, so pacing does its bookkeeping as in production), and both
// sides parse the JSON response. Reported per call: wall time, and the client process's CPU time.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { compare, median, sampleVariants } from './lib/overhead.mjs';

if (process.argv[2] === 'server') {
  const payload = JSON.stringify({
    success: true,
    data: [
      {
        tag: 'VIP',
        external_reference: 'vip',
        uuid: '6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f',
        created_at: '2026-11-21T10:15:30.000Z',
        updated_at: '2026-11-21T10:15:30.000Z',
        brand_id: 'brand-acme',
      },
    ],
  });
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
  server.listen(0, '127.0.0.1', () =>
    process.send(/** @type {import('node:net').AddressInfo} */ (server.address()).port),
  );
  process.on('disconnect', () => process.exit(0));
} else {
  const { createLoyaltyClient } = await import('@loyalty/sdk');
  const CALLS = Number(process.env.CALLS ?? 3000);
  const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);
  const ROUNDS = Number(process.env.ROUNDS ?? 7);
  const child = fork(new URL(import.meta.url).pathname, ['server'], { stdio: 'inherit' });
  const port = await new Promise((r) => child.once('message', r));
  const base = `http://127.0.0.1:${port}`;
  const token = 'bench-token';
  const client = createLoyaltyClient({ baseUrl: base, token });
  const body = { brand_id: 'brand-acme', external_reference: 'vip', tag: 'VIP' };

  const variants = {
    'GET plain fetch': () =>
      fetch(`${base}/tags`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }).then((r) =>
        r.json(),
      ),
    'GET client': () => client.GET('/tags'),
    'POST plain fetch': () =>
      fetch(`${base}/tags`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify(body),
      }).then((r) => r.json()),
    'POST client': () => client.POST('/tags', { body }),
  };

  const samples = await sampleVariants(variants, { calls: CALLS, concurrency: CONCURRENCY, rounds: ROUNDS });
  console.log(
    `${CALLS} calls x ${ROUNDS} rounds, ${CONCURRENCY} in flight, server in its own process, node ${process.version}`,
  );
  const worst = Math.max(compare(samples, 'GET').ratio, compare(samples, 'POST').ratio);
  child.disconnect();

  // The same calls with fetch answered in-process (it still builds its Request, as fetch does):
  // only the client-side JavaScript is measured, free of network and scheduling noise.
  const realFetch = globalThis.fetch;
  const canned = '{"success":true,"data":[]}';
  const cannedHeaders = {
    'content-type': 'application/json',
    'x-ratelimit-limit': '1000000000',
    'x-ratelimit-remaining': '999999999',
  };
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    await request.arrayBuffer();
    return new Response(canned, { status: request.method === 'POST' ? 201 : 200, headers: cannedHeaders });
  };
  const offline = createLoyaltyClient({ baseUrl: base, token: 'offline-token' });
  const jsVariants = {
    'GET plain fetch': variants['GET plain fetch'],
    'GET client': () => offline.GET('/tags'),
    'POST plain fetch': variants['POST plain fetch'],
    'POST client': () => offline.POST('/tags', { body }),
  };
  const js = Object.fromEntries(Object.keys(jsVariants).map((k) => [k, []]));
  for (const fn of Object.values(jsVariants)) for (let i = 0; i < 5000; i++) await fn();
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, fn] of Object.entries(jsVariants)) {
      const cpu = process.cpuUsage();
      for (let i = 0; i < 5000; i++) await fn();
      const used = process.cpuUsage(cpu);
      js[name].push((used.user + used.system) / 5000);
    }
  globalThis.fetch = realFetch;
  for (const method of ['GET', 'POST']) {
    const plain = median(js[`${method} plain fetch`]);
    const sdk = median(js[`${method} client`]);
    console.log(
      `${method} JavaScript only: plain fetch ${plain.toFixed(1)} µs, client ${sdk.toFixed(1)} µs (+${(sdk - plain).toFixed(1)} µs per call)`,
    );
  }
  // The target (within 10% of plain fetch against a local server) is judged against the
  // reference server by sdk-overhead-server.mjs. Against this no-op server a call is fetch's own
  // cost and little else, so this is the floor: reported, and a regression guard at 1.5.
  console.log(
    `no-op server floor: worst wall ratio ${worst.toFixed(3)} (reported; guard <= 1.50: ${worst <= 1.5 ? 'ok' : 'EXCEEDED'}; target judged by sdk-overhead-server.mjs)`,
  );
  process.exitCode = worst <= 1.5 ? 0 : 1;
}
