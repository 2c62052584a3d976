#!/usr/bin/env -S node --max-semi-space-size=4 --max-old-space-size=1024
// The V8 flags keep a long bulk command's memory flat (issue 18). With V8's defaults a 1M-row
// import peaked at 292 MB RSS (its live data is ~15 MB): the old generation's limit lets the
// garbage of 2000-row request bodies pile up between collections, and the young generation grows
// to 3 x 16 MB. Measured at 1M rows (import / export peak RSS): defaults 292 / 120 MB; semi-space
// 2 MB 113 / 195-212 MB (the export then promotes its body pieces and takes twice as long);
// semi-space 8 MB with the old-space cap 125 / 105 MB, in the same time (those on Node 20). On
// Node 24 (scale bench, `--only 18`), import / tags add-members / export peak RSS: semi-space
// 8 MB 145 / 132 / 125 MB at 1M; 4 MB 134 / 123 / 117 MB at 1M and 139 / 131 / 115 MB at 3M, in
// the same times (export 5.9 s at 1M, 21.4 s at 3M). 1024 MB still holds the
// member map of `members import --update` for a few million members. `node bin/loyalty.js`
// skips these flags (test/bench/lib/cli-process.mjs passes them).
// The compiled CLI (cli/dist, built with `npx tsc -b cli`). Start-up matters for a CLI: the
// compile cache (Node >= 22.1) makes later starts faster, and heavy modules load on demand:
// commands/start.js prints the root's help and the version without loading commander, and
// commands/run.js builds only the commands a run names (dist/main.js would import them all).
import module from 'node:module';

module.enableCompileCache?.();
const { start } = await import('../dist/commands/start.js');
await start();
