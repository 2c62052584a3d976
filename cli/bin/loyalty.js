#!/usr/bin/env -S node --max-semi-space-size=2 --max-old-space-size=1024
// The V8 flags keep a long bulk command's memory flat (issue 18). With V8's defaults a 1M-row
// import peaked at 292 MB RSS (the young generation grows to 3 x 16 MB, and the old generation's
// limit lets garbage of request bodies and rows pile up to ~170 MB between collections); with
// small spaces, 145 MB, in the same time: the live data is ~15 MB. 1024 MB still holds the member
// map of `members import --update` for a few million members. `node bin/loyalty.js` skips them.
// The compiled CLI (cli/dist, built with `npx tsc -b cli`). Start-up matters for a CLI: the
// compile cache (Node >= 22.1) makes later starts faster, and heavy modules load on demand.
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/main.js');
await main();
