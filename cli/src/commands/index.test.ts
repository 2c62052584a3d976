import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../main.js';
import { runCli } from '#test-helpers/cli-unit/run-cli.js';
import { loadProgram, stubCommand } from './index.js';
import { TOP_LEVEL_COMMANDS } from './tree.js';

describe('the lazily built command tree', () => {
  it('has a stub for every top-level command that the root lists like the command itself', async () => {
    const full = buildProgram();
    expect(TOP_LEVEL_COMMANDS.map((entry) => entry.name)).toEqual(full.commands.map((command) => command.name()));
    const help = full.createHelp();
    for (const entry of TOP_LEVEL_COMMANDS) {
      const real = await entry.load();
      const stub = stubCommand(entry);
      expect(help.subcommandTerm(stub), entry.name).toBe(help.subcommandTerm(real));
      expect(help.subcommandDescription(stub), entry.name).toBe(help.subcommandDescription(real));
      expect(real.aliases(), entry.name).toEqual([]);
      expect(Boolean(entry.hidden), entry.name).toBe(
        !full
          .createHelp()
          .visibleCommands(full)
          .some((command) => command.name() === entry.name),
      );
    }
  });

  it('prints the same root --help as the whole tree', async () => {
    let text = '';
    const full = buildProgram().configureOutput({
      writeOut: (chunk) => {
        text += chunk;
      },
    });
    full.outputHelp();
    const lazy = await runCli(['--help']);
    expect(lazy.code).toBe(0);
    expect(lazy.stdout).toBe(text);
  });

  it('builds the commands the arguments name and leaves the others as stubs', async () => {
    const program = await loadProgram(['--brand', 'b', 'members', 'import', 'x.csv']);
    const members = program.commands.find((command) => command.name() === 'members');
    const tags = program.commands.find((command) => command.name() === 'tags');
    expect(members?.commands.map((command) => command.name())).toContain('import');
    expect(tags?.commands).toEqual([]);
    // __complete walks the whole tree.
    const shape = (command: Command): unknown => [
      command.name(),
      command.options.map((option) => option.flags),
      command.commands.map(shape),
    ];
    const everything = await loadProgram(['__complete', '--', 'tags', '']);
    expect(shape(everything)).toEqual(shape(buildProgram()));
  });
});
