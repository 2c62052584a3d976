import { Command } from 'commander';
import { contextOf } from '../../context.js';
import { examples } from '../../help.js';
import type { OrderOptions } from '../../services/orders/orders.js';
import { collect, organizationOption } from '../options.js';

export function ordersCreateCommand(): Command {
  return new Command('create')
    .description('Order products of a promotion; prints one activated promotion code per unit')
    .option('--first-name <name>', 'customer first name')
    .option('--last-name <name>', 'customer last name')
    .option('--email <email>', 'customer e-mail (an existing customer is reused)')
    .option('--promotion <uuid>', 'promotion identifier')
    .addOption(organizationOption('organization identifier of the order'))
    .option(
      '--product <spec>',
      'product: 1, 1x2 (quantity 2), or id=1,qty=2,location=1,variant=11,value=21; repeatable',
      collect,
      [],
    )
    .option('--off-peak', 'an off-peak sale')
    .option('--shipping <address>', 'for delivery products: first_name=…,last_name=…,address1=…,city=…,country=…,zip=…')
    .option('--body <file>', 'the order as JSON (- for stdin); flags override its fields')
    .addHelpText(
      'after',
      examples(
        [
          'loyalty --profile till orders create --first-name Ada --last-name Lovelace --email ada@example.org --organization org-acme --promotion 0b6f0c5e-3d0a-4f57-9a54-0c1f4c8d2a10 --product id=1,qty=2,location=1',
          'two pickup codes',
        ],
        ['loyalty --profile till orders create --body order.json --json', 'an order prepared as JSON'],
      ),
    )
    .action(async (options: OrderOptions, command: Command) => {
      await (await import('../../services/orders/orders.js')).createOrder(await contextOf(command), options);
    });
}
