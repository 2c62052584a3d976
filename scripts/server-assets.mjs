// The files @loyalty/server reads at run time that live once, at the repository root:
// openapi.yaml and fixtures/demo.json. `npm pack` (prepack) copies them into server/ so the
// tarball carries them; postpack removes the copies again, so inside the repository the server
// always reads the root's files (server/src/config.ts packagedFile). The copies are git-ignored.
// Likewise Redoc's standalone bundle (and its licence notice), which /docs serves: the package
// carries that one file in assets/ instead of depending on redoc and its React peers
// (server/src/pages/docs-bundle.ts).
//
//   node scripts/server-assets.mjs copy | remove
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const server = new URL('server/', root);
const assets = ['openapi.yaml', 'fixtures/demo.json'];

const action = process.argv[2];
if (action === 'copy') {
  for (const file of assets) {
    const target = fileURLToPath(new URL(file, server));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(fileURLToPath(new URL(file, root)), target);
  }
  const redoc = createRequire(fileURLToPath(server)).resolve('redoc/bundles/redoc.standalone.js');
  mkdirSync(fileURLToPath(new URL('assets/', server)), { recursive: true });
  for (const file of [redoc, `${redoc}.LICENSE.txt`])
    copyFileSync(file, fileURLToPath(new URL(`assets/${basename(file)}`, server)));
} else if (action === 'remove') {
  rmSync(fileURLToPath(new URL('openapi.yaml', server)), { force: true });
  rmSync(fileURLToPath(new URL('fixtures/', server)), { recursive: true, force: true });
  rmSync(fileURLToPath(new URL('assets/', server)), { recursive: true, force: true });
} else {
  console.error('usage: node scripts/server-assets.mjs copy|remove');
  process.exit(2);
}
