#!/usr/bin/env node
// The compiled CLI (cli/dist, built with `npx tsc -b cli`). Start-up matters for a CLI: the
// compile cache (Node >= 22.1) makes later starts faster, and heavy modules load on demand.
import module from 'node:module';

module.enableCompileCache?.();
const { main } = await import('../dist/main.js');
await main();
