// End to end: the scripts of `loyalty completion <shell>` run in the real shells against the built
// binary. bash: the completion function called as bash calls it (COMP_WORDS, COMP_CWORD); fish:
// `complete -C`, fish's own completion of a command line; zsh: the function with zsh's words and
// CURRENT, its completion builtins stubbed to print what they were given. zsh and fish come from
// Debian (.ci/run installs them); a missing one fails its test.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../cli/src/domain.js';
import { LOYALTY_BIN } from '#test-helpers/cli.js';

let dir: string;
let env: NodeJS.ProcessEnv;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'loyalty-completion-'));
  const bin = path.join(dir, 'bin');
  await mkdir(bin);
  // `loyalty` on PATH, as an installed CLI is: the scripts run the program the user typed.
  await writeFile(path.join(bin, 'loyalty'), `#!/bin/sh\nexec '${process.execPath}' '${LOYALTY_BIN}' "$@"\n`);
  await chmod(path.join(bin, 'loyalty'), 0o755);
  const config = path.join(dir, 'config');
  await mkdir(path.join(config, 'loyalty'), { recursive: true });
  await writeFile(
    path.join(config, 'loyalty', 'config.json'),
    JSON.stringify({ profiles: { default: {}, staging: { api_url: 'http://127.0.0.1:1' } } }),
  );
  const work = path.join(dir, 'work');
  await mkdir(path.join(work, 'data'), { recursive: true });
  await writeFile(path.join(work, 'members.csv'), 'email\n');
  await writeFile(path.join(work, 'members.jsonl'), '');
  env = { PATH: `${bin}:${process.env.PATH}`, HOME: dir, XDG_CONFIG_HOME: config };
  for (const shell of ['bash', 'zsh', 'fish']) {
    scripts[shell] = path.join(dir, `loyalty.${shell}`);
    const script = execFileSync(process.execPath, [LOYALTY_BIN, 'completion', shell], { env, encoding: 'utf8' });
    await writeFile(scripts[shell], script);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function shell(command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd: path.join(dir, 'work'), env, encoding: 'utf8', timeout: 30_000 });
  if (result.error) throw result.error;
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

const lines = (text: string): string[] => text.split('\n').filter(Boolean);

function requireShell(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  expect(found, `${name} is not installed: apt-get install ${name} (.ci/run does)`).toBe(true);
}

describe('bash', () => {
  /** COMPREPLY of the script's function for the words (the last is the word at the cursor). */
  const complete = (...words: string[]): string[] =>
    lines(
      shell('bash', [
        '--norc',
        '--noprofile',
        '-c',
        // COMP_WORDBREAKS as an interactive bash has it (readline's word breaks)
        `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); ` +
          `COMP_LINE="\${COMP_WORDS[*]}"; COMP_POINT=\${#COMP_LINE}; COMP_WORDBREAKS=$' \\t\\n"\\'@><=;|&(:'; ` +
          `_loyalty_complete 2>/dev/null; printf "%s\\n" "\${COMPREPLY[@]}"`,
        'bash',
        scripts.bash as string,
        'loyalty',
        ...words,
      ]),
    );

  it('registers the function for loyalty', () => {
    expect(shell('bash', ['--norc', '-c', 'source "$1"; complete -p loyalty', 'bash', scripts.bash as string])).toBe(
      'complete -F _loyalty_complete loyalty\n',
    );
  });

  it('completes commands, subcommands and flags', () => {
    expect(complete('webhooks', 'cr')).toEqual(['create']);
    expect(complete('webh')).toEqual(['webhooks']);
    expect(complete('webhooks', 'create', '--pri')).toEqual(['--print-secret']);
  });

  it('completes event types, also after a comma and after --events=', () => {
    expect(complete('webhooks', 'create', '--events', 'member.cr')).toEqual(['member.created']);
    expect(complete('webhooks', 'create', '--events', '')).toEqual([...EVENT_TYPES]);
    expect(complete('webhooks', 'create', '--events', 'member.created,points')).toEqual([
      'member.created,points.changed',
    ]);
    // bash splits --events=po into --events, = and po; only po is replaced
    expect(complete('webhooks', 'create', '--events', '=', 'po')).toEqual(['points.changed']);
    expect(complete('trigger', 'coupon.')).toEqual(['coupon.issued', 'coupon.redeemed']);
  });

  it('completes --profile with the profiles of the config file, and choices', () => {
    expect(complete('--profile', '')).toEqual(['default', 'staging']);
    expect(complete('webhooks', 'deliveries', 'sub_1', '--status', 'f')).toEqual(['failed']);
  });

  it('completes files and directories only where a path goes', () => {
    // compgen lists in directory order; bash sorts what it shows
    expect(complete('members', 'import', 'mem').sort()).toEqual(['members.csv', 'members.jsonl']);
    expect(complete('members', 'subscribe', '-f', 'd')).toEqual(['data']);
    expect(complete('server', '--data-dir', '')).toEqual(['data']);
    expect(complete('webhooks', 'get', 'mem')).toEqual([]);
  });
});

describe('fish', () => {
  const complete = (line: string): string[] =>
    lines(shell('fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', scripts.fish as string, line]));

  it('parses', () => {
    requireShell('fish');
    expect(shell('fish', ['--no-execute', scripts.fish as string])).toBe('');
  });

  it('completes commands with descriptions, event types, profiles and files', () => {
    requireShell('fish');
    expect(complete('loyalty webhooks cr')).toEqual([
      'create\tSubscribe an HTTPS URL to events; prints the signing secret (shown only once)',
    ]);
    expect(complete('loyalty webhooks create --events member.cr')).toEqual(['member.created']);
    expect(complete('loyalty webhooks create --events=member.cr')).toEqual(['--events=member.created']);
    expect(complete('loyalty --profile st')).toEqual(['staging']);
    expect(complete('loyalty members import mem')).toEqual(['members.csv', 'members.jsonl']);
    expect(complete('loyalty webhooks get mem')).toEqual([]);
  });
});

describe('zsh', () => {
  /** What the function handed to _describe (value:description) or _files, for zsh's words. */
  const complete = (...words: string[]): string[] =>
    lines(
      shell('zsh', [
        '-f',
        '-c',
        'compdef() { : }; ' +
          `_describe() { print -rl -- "\${(@P)\${@[-1]}}" }; _files() { print -r -- "_files $*" }; ` +
          `source $1; shift; words=(loyalty "$@"); CURRENT=\${#words}; _loyalty`,
        'zsh',
        scripts.zsh as string,
        ...words,
      ]),
    );

  it('parses', () => {
    requireShell('zsh');
    expect(shell('zsh', ['-n', scripts.zsh as string])).toBe('');
  });

  it('completes commands with descriptions, event types, profiles and files', () => {
    requireShell('zsh');
    expect(complete('webhooks', 'cr')).toEqual([
      'create:Subscribe an HTTPS URL to events; prints the signing secret (shown only once)',
    ]);
    expect(complete('webhooks', 'create', '--events', 'member.created,c')).toEqual([
      'member.created,coupon.issued',
      'member.created,coupon.redeemed',
    ]);
    expect(complete('--profile', '')).toEqual(['default', 'staging']);
    expect(complete('members', 'import', '')).toEqual(['_files ']);
    expect(complete('server', '--data-dir', '')).toEqual(['_files -/']);
  });
});
