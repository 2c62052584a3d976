// `loyalty help options` (also `loyalty options`): the global options, listed once here rather
// than in every command's help, as `gh help environment` does for gh's variables.
import { Command } from 'commander';

export const OPTIONS_TOPIC = 'options';

export function optionsTopicCommand(): Command {
  const topic = new Command(OPTIONS_TOPIC)
    .description('The global options every command accepts (`loyalty help options`)')
    .helpGroup('Help topics:');
  topic
    .configureHelp({
      formatHelp: (cmd, helper) => {
        const root = cmd.parent ?? cmd;
        const options = root.options.filter((option) => !option.hidden && option.long !== '--version');
        const width = Math.max(...options.map((option) => helper.optionTerm(option).length));
        const items = options.map((option) =>
          helper.formatItem(helper.optionTerm(option), width, helper.optionDescription(option), helper),
        );
        return [
          'Global options: every command accepts these, before or after its name',
          '(`loyalty --brand brand-acme tags list` and `loyalty tags list --brand brand-acme` are the same).',
          '',
          ...items,
          '',
          'Settings resolve as flags > environment > profile > defaults; `loyalty config list` shows',
          'where each value comes from. -v, --version prints the version; -h, --help any command’s help.',
          '',
        ].join('\n');
      },
    })
    .action(() => topic.outputHelp());
  return topic;
}
