// Webhook signature verification of a 1 KB payload, on one core.
// Run: npx tsc -b sdk && node test/bench/sdk-verify.mjs   (target: >= 100,000 verifications/s)
// Baseline in the same run: the bare HMAC-SHA256 the check cannot avoid.
import { createHmac, createSecretKey } from 'node:crypto';
import { constructEvent, signPayload, verifySignature, verifyStandardWebhook } from '@loyalty/sdk/webhooks';

const secret = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const event = {
  id: '6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
  type: 'points.changed',
  created_at: '2026-11-21T10:15:30.000Z',
  organization_id: 'org-acme',
  data: {
    member_id: '0d9c8b7a-6e5f-4a3b-9c2d-1e0f9a8b7c6d',
    storecard_id: 'card-points',
    pass_id: 'p',
    type: 'earn',
    points: 5,
    balance: 25,
    reference: '',
  },
};
// Pad to exactly 1024 bytes.
event.data.reference = 'x'.repeat(1024 - JSON.stringify(event).length);
const body = Buffer.from(JSON.stringify(event));
if (body.length !== 1024) throw new Error(`payload is ${body.length} bytes`);
const headers = signPayload({ body, secret });
const signature = headers['loyalty-signature'];

/** Ops/s of one 250 ms round. */
function round(fn) {
  let ops = 0;
  const start = process.hrtime.bigint();
  const end = start + 250_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 1000; i++) fn();
    ops += 1000;
    now = process.hrtime.bigint();
  }
  return (ops * 1e9) / Number(now - start);
}

const key = createSecretKey(Buffer.from(secret));
const variants = {
  'bare HMAC-SHA256 of 1 KB, prepared key (baseline)': () => createHmac('sha256', key).update(body).digest(),
  'verifySignature (Loyalty-Signature)': () => verifySignature(body, signature, secret),
  'verifyStandardWebhook (webhook-signature + timestamp)': () => verifyStandardWebhook(body, headers, secret),
  'constructEvent (verify + JSON.parse)': () => constructEvent(body, headers, secret),
};
for (const fn of Object.values(variants)) for (let i = 0; i < 20_000; i++) fn(); // warm up
// Interleaved rounds, median per variant: load from other processes hits every variant alike.
const rounds = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let r = 0; r < 9; r++) for (const [name, fn] of Object.entries(variants)) rounds[name].push(round(fn));
const [baseline, ...results] = Object.entries(rounds).map(([name, xs]) => ({
  name,
  perSecond: Math.round(xs.sort((a, b) => a - b)[4]),
}));
const fmt = (n) => n.toLocaleString('en-US');
console.log(`payload ${body.length} B, node ${process.version}`);
console.log(`${baseline.name}: ${fmt(baseline.perSecond)}/s`);
for (const r of results)
  console.log(`${r.name}: ${fmt(r.perSecond)}/s (${(r.perSecond / baseline.perSecond).toFixed(2)}x baseline)`);
const verify = results[0].perSecond;
console.log(`target >= 100,000/s: ${verify >= 100_000 ? 'met' : 'NOT met'}`);
process.exitCode = verify >= 100_000 ? 0 : 1;
