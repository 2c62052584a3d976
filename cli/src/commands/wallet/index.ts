import { Command } from 'commander';
import { walletInspectCommand } from './inspect.js';
import { walletSimulateCommand } from './simulate.js';

export function walletCommand(): Command {
  return new Command('wallet')
    .description('Apple Wallet passes: simulate a phone that follows a pass’s updates, inspect a .pkpass offline')
    .addCommand(walletSimulateCommand())
    .addCommand(walletInspectCommand());
}
