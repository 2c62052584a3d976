import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';

export function sandboxDeleteCommand(): Command {
  return new Command('delete')
    .description('Delete a throwaway sandbox organization and all its data at once (no confirmation)')
    .argument('<organization-id>', 'the id `loyalty sandbox create` printed (sbx-…)')
    .addHelpText(
      'after',
      examples(
        ['loyalty sandbox delete sbx-3f9c2a7e1b4d', 'as its creator, its own admin, or the operator'],
        [
          'loyalty sandbox delete "$LOYALTY_ORGANIZATION_ID"',
          'at the end of a CI job that ran `eval "$(loyalty sandbox create --env)"`',
        ],
      ),
    )
    .action(async (id: string, _options: object, command: Command) => {
      await (await import('../../services/sandbox/sandbox-organizations.js')).deleteSandboxOrganization(
        await contextOf(command),
        id,
      );
    });
}
