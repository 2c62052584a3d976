import { Command } from 'commander';
import { passesIssueCommand } from './issue.js';

export function passesCommand(): Command {
  return new Command('passes').description('Passes held by members').addCommand(passesIssueCommand());
}
