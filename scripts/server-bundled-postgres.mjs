// @loyalty/server ships its own, repaired postgres.js: `bundleDependencies` in server/package.json.
// postgres.js 3.4.9 (the newest release) throws from a setImmediate when a query is written to a
// connection whose socket has closed, which ends the whole server when its PostgreSQL is killed
// mid-transaction (porsager/postgres#1066, #1154, #1208; the fixes #1168 and #1176 are not released).
// patches/postgres+3.4.9.patch repairs it here (patch-package, the root postinstall), but a patch
// of this repository's node_modules never reaches someone who installs the server's tarball; a
// bundled dependency does: npm installs it from the tarball as it is, never from the registry.
//
// npm does not bundle a workspace's dependency hoisted to the root node_modules (npm/cli#3466), so
// `npm pack` (prepack) copies the repaired module into server/node_modules/postgres, after checking
// that the repair is in it, and postpack removes the copy again (it is git-ignored anyway).
//
//   node scripts/server-bundled-postgres.mjs copy | remove
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('../server/', import.meta.url));
const bundled = path.join(server, 'node_modules', 'postgres');
/** Written beside the copy: only a copy of ours is removed (the tarball carries only postgres's own `files`). */
const COPY_MARK = path.join(server, 'node_modules', '.postgres-bundled-copy');
/** The module's three builds (ESM, CommonJS, Cloudflare), each with its own connection.js. */
const BUILDS = ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'];

/** The builds of the postgres.js in `dir` whose nextWrite still writes to a closed socket. */
export function unrepairedBuilds(dir) {
  return BUILDS.filter((file) => {
    const source = readFileSync(path.join(dir, file), 'utf8');
    const nextWrite = source.slice(source.indexOf('function nextWrite('));
    return !/^\s*function nextWrite\(fn\) \{\s*if \(!socket\)/.test(nextWrite);
  });
}

function copy() {
  if (existsSync(bundled) && !existsSync(COPY_MARK)) {
    // npm put a postgres.js of the server's own there (another version than the root's): bundle that one.
    check(bundled);
    return;
  }
  const entry = createRequire(path.join(server, 'package.json')).resolve('postgres'); // …/node_modules/postgres/cjs/src/index.js
  const at = `${path.sep}node_modules${path.sep}postgres${path.sep}`;
  const source = entry.slice(0, entry.lastIndexOf(at) + at.length - 1);
  check(source);
  rmSync(bundled, { recursive: true, force: true });
  cpSync(source, bundled, { recursive: true });
  writeFileSync(COPY_MARK, `copied from ${source} by scripts/server-bundled-postgres.mjs\n`);
}

function check(dir) {
  const missing = unrepairedBuilds(dir);
  if (missing.length === 0) return;
  console.error(
    `@loyalty/server would ship postgres.js without the repair of patches/postgres+3.4.9.patch (${missing.join(', ')} in ${dir}): run \`npm ci\` (its postinstall applies the patch), or carry the repair over to the new version.`,
  );
  process.exit(1);
}

function remove() {
  if (!existsSync(COPY_MARK)) return;
  rmSync(bundled, { recursive: true, force: true });
  rmSync(COPY_MARK, { force: true });
  if (readdirSync(path.dirname(COPY_MARK)).length === 0) rmSync(path.dirname(COPY_MARK), { recursive: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const action = process.argv[2];
  if (action === 'copy') copy();
  else if (action === 'remove') remove();
  else {
    console.error('usage: node scripts/server-bundled-postgres.mjs copy|remove');
    process.exit(2);
  }
}
