import { Command } from 'commander';
import { pointsImportCommand } from './import.js';

export function pointsCommand(): Command {
  return new Command('points')
    .description('Storecard points of members: import balances')
    .addCommand(pointsImportCommand());
}
