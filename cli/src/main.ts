// The `loyalty` program. The entry (run, reportError, main) is in commands/run.ts, which builds
// only the commands a run names; buildProgram() here builds the whole tree at once, for tests
// and tools that walk it.
import type { Command } from 'commander';
import { apiCommand } from './commands/api.js';
import { completeCommand, completionCommand } from './commands/completion.js';
import { configCommand } from './commands/config/index.js';
import { eventsCommand } from './commands/events/index.js';
import { rootCommand } from './commands/index.js';
import { optionsTopicCommand } from './commands/help-options.js';
import { styleHelp } from './commands/help-style.js';
import { loginCommand } from './commands/login.js';
import { membersCommand } from './commands/members/index.js';
import { ordersCommand } from './commands/orders/index.js';
import { passesCommand } from './commands/passes/index.js';
import { pointsCommand } from './commands/points/index.js';
import { sandboxCommand } from './commands/sandbox/index.js';
import { serverCommand } from './commands/server.js';
import { tagsCommand } from './commands/tags/index.js';
import { triggerCommand } from './commands/trigger.js';
import { vouchersCommand } from './commands/vouchers/index.js';
import { logsCommand } from './commands/logs/index.js';
import { walletCommand } from './commands/wallet/index.js';
import { webhooksCommand } from './commands/webhooks/index.js';

export { reportError } from './commands/report.js';
export { main, run } from './commands/run.js';

export function buildProgram(): Command {
  const program = rootCommand();
  program.addCommand(serverCommand());
  program.addCommand(loginCommand());
  program.addCommand(configCommand());
  program.addCommand(membersCommand());
  program.addCommand(pointsCommand());
  program.addCommand(tagsCommand());
  program.addCommand(vouchersCommand());
  program.addCommand(passesCommand());
  program.addCommand(ordersCommand());
  program.addCommand(webhooksCommand());
  program.addCommand(eventsCommand());
  program.addCommand(logsCommand());
  program.addCommand(walletCommand());
  program.addCommand(triggerCommand());
  program.addCommand(sandboxCommand());
  program.addCommand(apiCommand());
  program.addCommand(completionCommand());
  program.addCommand(optionsTopicCommand());
  program.addCommand(completeCommand(), { hidden: true });
  return styleHelp(program);
}
