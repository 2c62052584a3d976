import { describe, expect, it } from 'vitest';
import { buildProgram } from '../main.js';
import { runCli } from '#test-helpers/cli-unit/run-cli.js';
import { CLI_VERSION } from '../version.js';
import { rootHelp } from './root-help.js';
import { quickAnswer } from './start.js';

/**
 * The root's help as commander prints it from the whole tree, to a terminal `columns` wide (80
 * when there is no terminal, commander's default for output that is not a TTY).
 */
function commanderHelp(columns: number | undefined): string {
  let text = '';
  const program = buildProgram().configureOutput({
    writeOut: (chunk) => {
      text += chunk;
    },
    getOutHelpWidth: () => columns ?? 80,
  });
  program.outputHelp();
  return text;
}

describe("the root's help without commander", () => {
  it('is the text commander prints from the whole tree, at every width', () => {
    for (const columns of [undefined, 0, 20, 39, 40, 41, 50, 60, 72, 79, 80, 81, 100, 120, 132, 200, 1000]) {
      expect(rootHelp(columns), `columns ${columns}`).toBe(commanderHelp(columns));
    }
  });

  it('answers exactly the arguments whose output the program would print the same', async () => {
    for (const argv of [[], ['--help'], ['-h'], ['help'], ['--version'], ['-v']]) {
      const full = await runCli(argv);
      expect(full.code, argv.join(' ')).toBe(0);
      expect(quickAnswer(argv, { isTTY: false }), argv.join(' ')).toBe(full.stdout);
    }
    expect(quickAnswer(['-v'], {})).toBe(`${CLI_VERSION}\n`);
    for (const argv of [['help', 'members'], ['members'], ['--help', '--json'], ['--versions'], ['options']]) {
      expect(quickAnswer(argv, {}), argv.join(' ')).toBeUndefined();
    }
  });

  it("wraps to the terminal's width, and to 80 columns when stdout is not a terminal", () => {
    expect(quickAnswer(['--help'], { isTTY: true, columns: 120 })).toBe(commanderHelp(120));
    expect(quickAnswer(['--help'], { isTTY: false, columns: 120 })).toBe(commanderHelp(80));
  });
});
