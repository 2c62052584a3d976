import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from './main.js';
import { parseDatabaseUrlFlag, SECRET_NAME } from './secrets.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';

/** Every option of every command, with the command path it belongs to. */
function everyOption(): Array<{ path: string; flags: string; long: string; takesValue: boolean; hidden: boolean }> {
  const found: Array<{ path: string; flags: string; long: string; takesValue: boolean; hidden: boolean }> = [];
  const walk = (command: Command, path: string): void => {
    for (const option of command.options) {
      found.push({
        path,
        flags: option.flags,
        long: option.long ?? '',
        takesValue: option.required || option.optional,
        hidden: option.hidden,
      });
    }
    for (const child of command.commands) walk(child, `${path} ${child.name()}`);
  };
  walk(buildProgram(), 'loyalty');
  return found;
}

describe('secrets never on argv', () => {
  it('no visible flag takes a secret as its value: secrets come from files, stdin or the environment', () => {
    // A value that names a file, or a number about tokens, is not a secret.
    const notASecret = /-(file|stdin)$|^--rate-limit-token$/;
    const offending = everyOption().filter(
      (o) => !o.hidden && o.takesValue && SECRET_NAME.test(o.long) && !notASecret.test(o.long),
    );
    expect(offending.map((o) => `${o.path} ${o.flags}`)).toEqual([]);
  });

  it('refuses a bearer token given as --token with exit 2, before anything runs, naming the ways that keep it off argv', async () => {
    for (const args of [
      ['--token', 'tok_live_1234567890', 'tags', 'list'],
      ['tags', 'list', '--token=tok_live_1234567890'],
    ]) {
      const result = await runCli(args, {
        env: { XDG_CONFIG_HOME: await tempConfigHome(), LOYALTY_API_URL: 'http://127.0.0.1:9' },
      });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('process list');
      for (const way of ['--token-file <path>', 'LOYALTY_TOKEN']) expect(result.stderr).toContain(way);
      expect(result.stderr).not.toContain('tok_live_1234567890');
    }
  });

  it('refuses a client secret given as --client-secret with exit 2 and points at --client-secret-stdin', async () => {
    const home = await tempConfigHome();
    const result = await runCli(['login', '--client-id', 'acme-admin', '--client-secret', 'acme-admin-secret'], {
      env: { XDG_CONFIG_HOME: home },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('process list');
    for (const way of ['--client-secret-stdin', 'LOYALTY_CLIENT_SECRET']) expect(result.stderr).toContain(way);
    expect(result.stderr).not.toContain('acme-admin-secret');
  });

  it('refuses a database URL with a password in it, and keeps one without', async () => {
    const refused = await runCli(['server', '--database-url', 'postgres://loyalty:hunter2@db.example/loyalty']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('process list');
    for (const way of ['DATABASE_URL', 'PGPASSWORD']) expect(refused.stderr).toContain(way);
    expect(refused.stderr).not.toContain('hunter2');
    expect(parseDatabaseUrlFlag('postgres://loyalty@db.example/loyalty')).toBe('postgres://loyalty@db.example/loyalty');
  });

  it('says so in the main --help', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/Secrets .*never .*flag values/s);
  });
});
