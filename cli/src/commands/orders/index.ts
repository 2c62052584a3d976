import { Command } from 'commander';
import { ordersCreateCommand } from './create.js';

export function ordersCommand(): Command {
  return new Command('orders')
    .description('Webshop promotion orders (device token: log in a profile with a device client)')
    .addCommand(ordersCreateCommand());
}
