// Checks the live (ink) progress view in a real terminal: runs `loyalty members import` inside
// a tmux pane, reads the screen while it runs and when it ends, and checks that the same
// command without a terminal prints plain progress lines instead. Needs tmux, a built CLI, a
// running server and credentials in the environment (LOYALTY_API_URL, LOYALTY_CLIENT_ID,
// LOYALTY_CLIENT_SECRET, LOYALTY_BRAND), e.g.:
//
//   loyalty server --port 3917 &
//   LOYALTY_API_URL=http://127.0.0.1:3917 LOYALTY_CLIENT_ID=acme-admin LOYALTY_CLIENT_SECRET=acme-admin-secret \
//     LOYALTY_BRAND=brand-acme node cli/scripts/tty-check.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/loyalty.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'loyalty-tty-'));
const session = `loyalty-tty-${process.pid}`;
const rows = 6000;
const fail = (message) => {
  console.error(`FAIL ${message}`);
  process.exitCode = 1;
};
if (spawnSync('tmux', ['-V']).status !== 0) {
  console.log('SKIP tmux is not installed');
  process.exit(0);
}

const csv = (tag) =>
  `${[
    'email,first_name',
    ...Array.from({ length: rows }, (_, i) => `tty-${tag}-${Date.now()}-${i}@example.com,F${i}`),
  ].join('\n')}\n`;
writeFileSync(join(work, 'live.csv'), csv('live'));
writeFileSync(join(work, 'plain.csv'), csv('plain'));
const env = { ...process.env, XDG_CONFIG_HOME: join(work, 'config') };
const pass = ['LOYALTY_API_URL', 'LOYALTY_CLIENT_ID', 'LOYALTY_CLIENT_SECRET', 'LOYALTY_BRAND']
  .map((name) => `${name}='${env[name] ?? ''}'`)
  .join(' ');
const command = `cd ${work} && XDG_CONFIG_HOME=${env.XDG_CONFIG_HOME} ${pass} ${process.execPath} ${bin} members import live.csv --batch-size 500 --concurrency 1; echo EXIT=$?; sleep 120`;
const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '120', '-y', '20', command]);
try {
  let during = '';
  for (let i = 0; i < 300 && !/EXIT=/.test(during); i++) {
    await sleep(200);
    const now = screen();
    if (/Importing live\.csv/.test(now) && /█/.test(now) && /batch \d+ of 12/.test(now) && !/EXIT=/.test(now))
      during = now;
    if (/EXIT=/.test(now)) {
      if (!during) fail(`never saw the live view while the import ran; last screen:\n${now}`);
      during ||= now;
      const end = now;
      if (!/✔ Imported live\.csv/.test(end)) fail(`final frame missing:\n${end}`);
      if (!/████████████████████████ 6,000 of 6,000 rows \(100%\) · batch 12 of 12/.test(end))
        fail(`final progress bar missing:\n${end}`);
      if (!/EXIT=0/.test(end)) fail(`import did not exit 0:\n${end}`);
      if (/import: \d/.test(end)) fail(`plain progress lines on a terminal:\n${end}`);
      console.log(`live view while running:\n${during.trim()}\n\nfinal screen:\n${end.trim()}\n`);
      break;
    }
  }
} finally {
  spawnSync('tmux', ['kill-session', '-t', session]);
}

// Without a terminal (stderr is a pipe): plain lines, no escape sequences.
const plain = spawnSync(process.execPath, [bin, 'members', 'import', 'plain.csv', '--batch-size', '500'], {
  cwd: work,
  env,
  encoding: 'utf8',
});
if (plain.status !== 0) fail(`plain import exited ${plain.status}: ${plain.stderr}`);
// biome-ignore lint/suspicious/noControlCharactersInRegex: it looks for ANSI escape sequences, which start with the ESC control character
if (/\u001b\[/.test(plain.stderr)) fail('escape sequences on a pipe');
if (!/import: 6,000\/6,000 rows \(100%\), 12\/12 batches/.test(plain.stderr))
  fail(`no final plain line:\n${plain.stderr}`);
console.log(`without a terminal:\n${plain.stderr.trim()}`);
console.log(process.exitCode ? '\nFAILED' : '\nOK: live view on a terminal, plain lines on a pipe');
