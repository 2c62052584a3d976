import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../domain.js';
import { buildProgram } from '../../main.js';
import { runCli, tempConfigHome } from '#test-helpers/cli-unit/run-cli.js';
import { complete } from './completion.js';
import { TRIGGER_TYPES } from '../trigger/recipes.js';

const NO_CONFIG = { XDG_CONFIG_HOME: '/nonexistent/loyalty-completion-test' };

async function values(...words: string[]): Promise<string[]> {
  return (await complete(buildProgram(), words, NO_CONFIG)).candidates.map((candidate) => candidate.value);
}

async function fallback(...words: string[]): Promise<string> {
  return (await complete(buildProgram(), words, NO_CONFIG)).fallback;
}

describe('complete: commands and flags from the commander tree', () => {
  it('offers the top-level commands, hidden ones left out, with their descriptions', async () => {
    const { candidates } = await complete(buildProgram(), [''], NO_CONFIG);
    const names = candidates.map((candidate) => candidate.value);
    expect(names).toEqual(expect.arrayContaining(['members', 'webhooks', 'trigger', 'completion', 'help']));
    expect(names).not.toContain('__complete');
    expect(candidates.find((candidate) => candidate.value === 'webhooks')?.description).toMatch(/^Webhook/);
  });

  it('completes a subcommand from its prefix', async () => {
    expect(await values('webhooks', 'cr')).toEqual(['create']);
    expect(await values('webhooks', 're')).toEqual(['retry', 'recover', 'replay-missing']);
  });

  it('offers every subcommand of a command, as commander knows them', async () => {
    const webhooks = buildProgram().commands.find((command) => command.name() === 'webhooks');
    const expected = webhooks?.commands.map((command) => command.name()) ?? [];
    expect(expected.length).toBeGreaterThan(10);
    expect(await values('webhooks', '')).toEqual([...expected, 'help']);
  });

  it('completes long flags of the command and the global ones, not hidden ones', async () => {
    const flags = await values('webhooks', 'create', '--');
    expect(flags).toEqual(
      expect.arrayContaining(['--url', '--events', '--print-secret', '--help', '--profile', '--json']),
    );
    expect(flags).not.toContain('--token'); // refused secret flag, hidden from help
    expect(await values('webhooks', 'create', '--pr')).toEqual(['--print-secret', '--profile']);
  });

  it('skips option values when finding the command, and stops at `--`', async () => {
    expect(await values('--api-url', 'http://x', 'webhooks', 'cr')).toEqual(['create']);
    expect(await values('--', 'webhooks')).toEqual([]);
    // the word after a flag with a required value is that value, even one starting with -
    expect(await values('webhooks', 'create', '--url', '--ev')).toEqual([]);
  });

  it('completes the implicit help command with the commands it can explain', async () => {
    expect(await values('help', 'we')).toEqual(['webhooks']);
  });
});

describe('complete: values', () => {
  it('completes --events with the event types of the document, the last item of a list', async () => {
    expect(await values('webhooks', 'create', '--events', '')).toEqual([...EVENT_TYPES]);
    expect(await values('webhooks', 'create', '--events', 'member.cr')).toEqual(['member.created']);
    expect(await values('webhooks', 'listen', '--events', 'member.created,coupon.')).toEqual([
      'member.created,coupon.issued',
      'member.created,coupon.redeemed',
    ]);
    expect(await values('webhooks', 'create', '--events=po')).toEqual(['--events=points.changed']);
  });

  it('leaves out event types already in the list', async () => {
    const list = await values('webhooks', 'update', 'id', '--events', 'member.created,');
    expect(list).not.toContain('member.created,member.created');
    expect(list).toHaveLength(EVENT_TYPES.length - 1);
  });

  it('completes the event type of trigger with the types it has recipes for', async () => {
    expect(await values('trigger', '')).toEqual([...TRIGGER_TYPES]);
    // --wait [seconds] takes the next word when it is not a flag, as commander parses it
    expect(await values('trigger', '--wait', '5', 'coupon.r')).toEqual(['coupon.redeemed']);
    expect(await values('trigger', '--wait', '--st')).toEqual(['--storecard']);
  });

  it('completes choices declared with .choices()', async () => {
    expect(await values('webhooks', 'deliveries', 'sub', '--status', '')).toEqual(['pending', 'delivered', 'failed']);
    expect(await values('members', 'export', '--format', 'j')).toEqual(['jsonl']);
    expect(await values('completion', '')).toEqual(['bash', 'zsh', 'fish']);
  });

  it('completes setting keys of config get/set/unset', async () => {
    expect(await values('config', 'get', 'cl')).toEqual(['client_id', 'client_secret']);
  });

  it('lets the shell complete paths for flags and arguments that take one, and nothing for others', async () => {
    expect(await fallback('tags', 'add-members', 'vip', '-f', '')).toBe('files');
    expect(await fallback('members', 'subscribe', '--file', '')).toBe('files');
    expect(await fallback('members', 'export', '-o', '')).toBe('files');
    expect(await fallback('webhooks', 'verify', '--secret-file', '')).toBe('files');
    expect(await fallback('members', 'import', '')).toBe('files');
    expect(await fallback('webhooks', 'verify', '')).toBe('files');
    expect(await fallback('server', '--data-dir', '')).toBe('dirs');
    expect(await fallback('webhooks', 'create', '--url', '')).toBe('none');
    expect(await fallback('webhooks', 'get', '')).toBe('none');
  });

  it('completes --profile with the profiles of the config file, and none without one', async () => {
    const home = await tempConfigHome();
    await mkdir(join(home, 'loyalty'));
    await writeFile(join(home, 'loyalty', 'config.json'), JSON.stringify({ profiles: { staging: {}, prod: {} } }));
    const env = { XDG_CONFIG_HOME: home };
    const names = async (...words: string[]) =>
      (await complete(buildProgram(), words, env)).candidates.map((candidate) => candidate.value);
    expect(await names('--profile', '')).toEqual(['prod', 'staging']);
    expect(await names('webhooks', 'list', '--profile', 'st')).toEqual(['staging']);
    expect(await values('--profile', '')).toEqual([]);
    await writeFile(join(home, 'loyalty', 'config.json'), '{not json');
    expect(await names('--profile', '')).toEqual([]);
  });
});

describe('loyalty __complete and loyalty completion', () => {
  it('prints candidates with descriptions and the directive, words after -- untouched by the parser', async () => {
    const home = await tempConfigHome();
    await mkdir(join(home, 'loyalty'));
    await writeFile(join(home, 'loyalty', 'config.json'), JSON.stringify({ profiles: { staging: {} } }));
    const result = await runCli(['__complete', '--', '--profile', ''], { env: { XDG_CONFIG_HOME: home } });
    expect(result).toMatchObject({ code: 0, stdout: 'staging\n:4\n', stderr: '' });
    const commands = await runCli(['__complete', '--', 'webhooks', 'cr']);
    expect(commands.stdout).toBe(
      'create\tSubscribe an HTTPS URL to events; prints the signing secret (shown only once)\n:4\n',
    );
    const files = await runCli(['__complete', '--', 'members', 'import', '']);
    expect(files.stdout).toBe(':0\n');
  });

  it('prints a script for each shell that calls __complete', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const result = await runCli(['completion', shell]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('__complete --');
      expect(result.stdout).toContain(`loyalty completion ${shell}`);
    }
  });

  it('refuses an unknown shell as a usage error naming the valid ones', async () => {
    const result = await runCli(['completion', 'powershell']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bash, zsh, fish');
    expect(result.stdout).toBe('');
  });

  it('says how to install the script for each shell in --help', async () => {
    const { stdout } = await runCli(['completion', '--help']);
    expect(stdout).toContain('~/.local/share/bash-completion/completions/loyalty');
    expect(stdout).toContain('$fpath');
    expect(stdout).toContain('~/.config/fish/completions/loyalty.fish');
  });
});
