import { Command } from 'commander';
import { eventsResendCommand } from './resend.js';

export function eventsCommand(): Command {
  return new Command('events')
    .description('Events of the organization: send one again')
    .addCommand(eventsResendCommand());
}
