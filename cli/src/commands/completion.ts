import { Argument, Command } from 'commander';
import { examples } from '../help.js';
import { runtimeOf } from '../runtime.js';
import { SHELLS, type Shell } from '../services/completion/completion-scripts.js';

export function completionCommand(): Command {
  return new Command('completion')
    .description('Print the shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText(
      'after',
      '\nInstall (then open a new shell):\n' +
        '  bash  loyalty completion bash > ~/.local/share/bash-completion/completions/loyalty\n' +
        '        (needs the bash-completion package; without it: source <(loyalty completion bash) in ~/.bashrc)\n' +
        `  zsh   loyalty completion zsh > "\${fpath[1]}/_loyalty"\n` +
        '        (any directory of $fpath that compinit reads; or: source <(loyalty completion zsh) after compinit)\n' +
        '  fish  loyalty completion fish > ~/.config/fish/completions/loyalty.fish\n\n' +
        'Commands, subcommands and flags complete from the CLI itself, so they follow upgrades; so do\n' +
        'event types (--events, trigger), --profile names, the choices of flags like --status and --format,\n' +
        'and file paths for flags that take one.\n',
    )
    .addHelpText(
      'after',
      examples(
        ['loyalty completion bash > ~/.local/share/bash-completion/completions/loyalty', 'bash, for your user'],
        ['source <(loyalty completion zsh)', 'zsh, in this shell only'],
      ),
    )
    .action(async (shell: Shell, _options: unknown, command: Command) => {
      const { completionScript } = await import('../services/completion/completion-scripts.js');
      runtimeOf(command).stdout.write(completionScript(shell));
    });
}

/**
 * `loyalty __complete -- <words…>`: the candidates for the last word, one per line, for the
 * scripts above (cobra's protocol). Hidden; the words after `--` reach it untouched by commander.
 */
export function completeCommand(): Command {
  return new Command('__complete')
    .description('print completion candidates for the words given (used by the completion scripts)')
    .argument('[words...]', 'the words after `loyalty` up to the cursor; the last one is being completed')
    .addHelpText(
      'after',
      examples(
        ["loyalty __complete -- webhooks create --events ''", 'the event types, then :4 (no file completion)'],
        ['loyalty __complete -- members import mem', 'no candidates, then :0 (the shell completes files)'],
      ),
    )
    .action(async (words: string[], _options: unknown, command: Command) => {
      const { complete, formatCompletion } = await import('../services/completion/completion.js');
      let program = command;
      while (program.parent) program = program.parent;
      const runtime = runtimeOf(command);
      runtime.stdout.write(formatCompletion(await complete(program, words, runtime.env)));
    });
}
