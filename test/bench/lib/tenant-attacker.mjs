// The attacking tenant of sandbox-tenants.mjs, in a process of its own (forked with an IPC channel)
// so that its sockets, loops and timers never share an event loop with the measurement of the
// other tenant. argv: <attack> <base url>. It sets its attack up, sends {ready: {...}}, keeps
// attacking until it receives 'stop', then sends {done: {...counts}} and exits.
//
// Attacks (issue 25's findings):
//   clock-reset   acme moves its sandbox clock forward a day at a time and resets, in a loop
//   tokens        acme mints TOKENS tokens and opens 2 stalled unpaged member lists with each
//   faults        acme sends `Prefer: fault=…;id=<n>` with a new id each time (health and API routes)
//   long-polls    acme holds POLLS open `GET /events?wait=30` long polls (new ones as they end)
import { connect } from 'node:net';
import { clientToken } from './admin-token.mjs';

const [attack, url] = process.argv.slice(2);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 100);
const POLLS = Number(process.env.BENCH_POLLS ?? 300);
let stopping = false;
const counts = { requests: 0, statuses: /** @type {Record<string, number>} */ ({}) };
const count = (status) => {
  counts.requests++;
  counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
};

const token = (clientId = 'acme-admin') => clientToken(url, clientId);

async function call(tok, method, path, body, headers = {}) {
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tok}`, ...(body && { 'content-type': 'application/json' }), ...headers },
      body: body && JSON.stringify(body),
      signal: AbortSignal.timeout(40_000),
    });
    await res.arrayBuffer();
    count(res.status);
    return res.status;
  } catch {
    count('error');
    return 0;
  }
}

const attacks = {
  async 'clock-reset'(ready) {
    const tok = await token();
    ready({});
    let tokNow = tok;
    for (let i = 0; !stopping; i++) {
      const status = await call(tokNow, 'POST', '/sandbox/clock', { advance: '1d' });
      if (status === 401) tokNow = await token(); // this tenant's own tokens follow its own clock
      if (i % 5 === 4) {
        await call(tokNow, 'POST', '/sandbox/reset', {});
        tokNow = await token(); // a reset revokes the caller's tokens
      }
    }
  },
  async tokens(ready) {
    const tokens = [];
    for (let i = 0; i < TOKENS; i++) tokens.push(await token());
    const { hostname, port } = new URL(url);
    const sockets = [];
    for (const tok of tokens)
      for (let j = 0; j < 2; j++) {
        const s = connect(Number(port), hostname);
        const body = JSON.stringify({ brand_id: 'brand-acme' });
        s.write(
          `POST /members/list HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tok}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
        s.on('error', () => {});
        s.once('data', (chunk) => {
          count(/^HTTP\/1\.1 (\d+)/.exec(String(chunk))?.[1] ?? 'other');
          s.pause(); // never read more: a stalled reader
        });
        sockets.push(s);
      }
    await new Promise((r) => setTimeout(r, 2000));
    ready({ tokens: tokens.length, stalled: sockets.length });
    while (!stopping) await new Promise((r) => setTimeout(r, 100));
    for (const s of sockets) s.destroy();
  },
  async faults(ready) {
    const tok = await token();
    ready({});
    const lanes = Array.from({ length: 8 }, async (_, lane) => {
      for (let i = lane; !stopping; i += 8) {
        const prefer = { prefer: `fault=server_error;times=1;id=bench-${i}` };
        if (i % 2) {
          try {
            const res = await fetch(`${url}/health/ready`, { headers: prefer });
            await res.arrayBuffer();
            count(res.status);
          } catch {
            count('error');
          }
        } else await call(tok, 'GET', '/tags', undefined, prefer);
      }
    });
    await Promise.all(lanes);
  },
  async 'long-polls'(ready) {
    const tok = await token();
    // As `loyalty webhooks listen` polls: from the feed's newest cursor on, each poll held until an
    // event of this organization arrives or `wait` runs out, then again from the cursor it got.
    const feed = async (query) => {
      try {
        const res = await fetch(`${url}/events?${query}`, {
          headers: { authorization: `Bearer ${tok}` },
          signal: AbortSignal.timeout(40_000),
        });
        const body = await res.json().catch(() => ({}));
        count(res.status);
        return { status: res.status, cursor: body.next_cursor };
      } catch {
        count('error');
        return { status: 0 };
      }
    };
    const start = await feed('limit=1');
    const poll = async () => {
      let cursor = start.cursor;
      while (!stopping) {
        const res = await feed(`wait=30${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
        if (res.cursor) cursor = res.cursor;
        // A well-behaved client waits out a 429 or an error instead of asking again at once.
        if (res.status !== 200) await new Promise((r) => setTimeout(r, 1000));
      }
    };
    const polls = Array.from({ length: POLLS }, poll);
    await new Promise((r) => setTimeout(r, 1000));
    ready({ polls: POLLS });
    await Promise.race([Promise.all(polls), new Promise((r) => process.once('message', r))]);
  },
};

process.on('message', (m) => {
  if (m === 'stop') stopping = true;
});
const run = attacks[attack];
if (!run) throw new Error(`unknown attack ${attack}`);
const finished = run((info) => process.send?.({ ready: info }));
await new Promise((resolve) => {
  const check = () => (stopping ? resolve(undefined) : setTimeout(check, 50));
  check();
});
await Promise.race([finished, new Promise((r) => setTimeout(r, 2000))]);
process.send?.({ done: counts }, () => process.exit(0));
