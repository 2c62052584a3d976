// The table at the end of `npm run bench`: one row per goal of issue 30, in the order,
// from the rows the benchmarks reported (lib/summary.mjs), then the other benchmarks' rows. Every
// goal is a ratio to an anchor measured in the same run (issue 30: a shared machine's speed moves
// 2–3× from day to day). Each row carries the machine's 1-minute load average when it was
// reported, so a noisy run can be told apart. A goal whose benchmark did not run (filtered out,
// or failed before it measured) shows as "not run", never as met.
import { goalMet } from './summary.mjs';

/** Issue 30's goals, in its order: id → the benchmark that reports it. */
const EXPECTED = [
  ['signups-p50', 'server-members.mjs'],
  ['import-100k', 'cli-import.mjs'],
  ['voucher-100k', 'server-vouchers.mjs'],
  ['voucher-100k-subscribed', 'server-vouchers.mjs'],
  ['scale-vouchers-100k-1M', 'scale.mjs --size 1m'],
  ['deliveries-sustained', 'server-webhooks.mjs'],
  ['deliveries-sustained-8', 'server-webhooks.mjs'],
  ['tags-get-vs-bare', 'server-tags.mjs'],
  ['member-get-vs-bare', 'server-members.mjs'],
  ['list-100k-streamed', 'server-members.mjs'],
  ['cli-help', 'cli-help.mjs'],
  ['api-processes-2', 'cluster.mjs'],
];

const fmt = (value, unit) => {
  if (!Number.isFinite(value)) return String(value);
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const n = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return unit === '×' ? `${n}×` : `${n} ${unit}`;
};

/** @param {import('./summary.mjs').SummaryRow[]} rows */
export function printSummary(rows) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = [
    ...EXPECTED.map(([id, bench]) => byId.get(id) ?? { id, missing: bench }),
    ...rows.filter((r) => !EXPECTED.some(([id]) => id === r.id)),
  ];
  const table = ordered.map((r) => {
    if ('missing' in r) return [r.id, 'not run', '', `(${r.missing})`, '', '—', ''];
    const goal = `${r.better === 'lower' ? '≤' : '≥'} ${fmt(r.goal, r.goalOn === 'ratio' ? '×' : r.unit)}${r.goalOn === 'ratio' ? ' of anchor' : ''}`;
    return [
      r.measure,
      fmt(r.now, r.unit),
      goal,
      `${r.anchorLabel}: ${fmt(r.anchor, r.unit)}`,
      `${(r.now / r.anchor).toFixed(2)}×`,
      goalMet(r) ? 'met' : 'MISSED',
      r.load === undefined ? '' : r.load.toFixed(1),
    ];
  });
  const head = ['measure', 'now', 'goal', 'anchor (same run)', 'now/anchor', 'goal', 'load'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log('\n=== goals (issue 30: ratios to anchors measured in the same run; load: 1-minute load average)');
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of table) console.log(line(row));
}
