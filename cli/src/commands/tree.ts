// The command tree as data, with no import of the command framework: the root's description,
// global options and help texts, and the top-level commands (each loaded on demand). index.ts
// builds commander's tree from it; root-help.ts prints the root's --help from it alone, so
// `loyalty --help` and `--version` start without loading commander (start.ts).
import type { Command } from 'commander';
import { examples } from '../help.js';

/** The help option and command that help-style.ts gives every command. */
export const HELP_OPTION = { flags: '-h, --help', description: 'show this help' } as const;
export const HELP_COMMAND = { name: 'help [command]', description: 'show the help of a command' } as const;

export const ROOT_DESCRIPTION = 'Work with the Loyalty Pass API from the terminal: imports, tags, vouchers, webhooks.';
export const VERSION_OPTION = { flags: '-v, --version', description: 'print the version' } as const;

export interface RootOption {
  flags: string;
  description: string;
  /** A secret refused on the command line (secrets.ts): hidden, its use names these alternatives. */
  refusedSecret?: { what: string; alternatives: string };
}

/** The root's options after --version, in the order its --help lists them. */
export const ROOT_OPTIONS: readonly RootOption[] = [
  { flags: '--profile <name>', description: 'settings profile to use (env LOYALTY_PROFILE; default "default")' },
  { flags: '--api-url <url>', description: 'API base URL (env LOYALTY_API_URL; default http://127.0.0.1:3000)' },
  { flags: '--brand <id>', description: 'brand for brand-scoped commands (env LOYALTY_BRAND)' },
  {
    flags: '--token-file <path>',
    description: 'read a bearer token from this file ("-" for stdin) instead of the profile',
  },
  {
    flags: '--token',
    description: '',
    refusedSecret: {
      what: 'bearer token',
      alternatives:
        '--token-file <path> ("-" reads stdin), the LOYALTY_TOKEN environment variable, or a profile (`loyalty login`)',
    },
  },
  { flags: '--json', description: 'print data as JSON' },
  {
    flags: '--jq <expr>',
    description: 'filter the JSON output with a jq expression (implies --json); one result per line, strings raw',
  },
  { flags: '--no-color', description: 'no colours (NO_COLOR is honoured too)' },
  {
    flags: '--debug',
    description: 'show each API request (method, path, status, request id) and stack traces of errors',
  },
];

/** The texts after the root's command list (commander's addHelpText('after', …), in order). */
export const ROOT_HELP_AFTER: readonly string[] = [
  examples(
    ['loyalty server', 'start the reference server on http://127.0.0.1:3000'],
    [
      'printf %s acme-admin-secret | loyalty login --client-id acme-admin --client-secret-stdin --brand brand-acme',
      'log in with client credentials',
    ],
    ['loyalty members import members.csv', 'import members from a CSV (resumable with --resume)'],
    [
      'loyalty vouchers issue --tag vip --coupon coupon-welcome --wait',
      'issue a coupon to everyone on a tag and watch the job',
    ],
    ['loyalty webhooks listen --forward-to http://localhost:4242/webhooks', 'receive events locally, signed'],
  ),
  'Secrets (tokens, client secrets, webhook secrets) come from files, stdin, the environment or a\nhidden prompt, never from flag values: those are visible to other users in the process list.\n',
];

export interface TopLevelCommand {
  name: string;
  description: string;
  /** The command's arguments as its usage shows them, e.g. `<event-type>`. */
  args?: string[];
  /** Whether the command has options of its own (`[options]` in the root's list). */
  options?: boolean;
  hidden?: boolean;
  /** The heading the root's --help lists it under (default: Commands). */
  group?: string;
  load: () => Promise<Command>;
}

/** In the order the root's --help lists them. */
export const TOP_LEVEL_COMMANDS: readonly TopLevelCommand[] = [
  {
    name: 'server',
    description: 'Start the reference server (the same as `npm start`); stops cleanly on Ctrl-C',
    options: true,
    load: async () => (await import('./server.js')).serverCommand(),
  },
  {
    name: 'login',
    description: 'Store client credentials (or a token) in a profile, after checking them against the API',
    options: true,
    load: async () => (await import('./login.js')).loginCommand(),
  },
  {
    name: 'config',
    description: 'Show and change settings (flags > environment > profile > defaults)',
    load: async () => (await import('./config/index.js')).configCommand(),
  },
  {
    name: 'members',
    description: 'Import, export, look up and change members of a brand',
    load: async () => (await import('./members/index.js')).membersCommand(),
  },
  {
    name: 'points',
    description: 'Storecard points of members: import balances',
    load: async () => (await import('./points/index.js')).pointsCommand(),
  },
  {
    name: 'tags',
    description: 'Tags group members into segments (for voucher jobs)',
    load: async () => (await import('./tags/index.js')).tagsCommand(),
  },
  {
    name: 'vouchers',
    description: 'Issue a coupon or storecard to every member of a tag',
    load: async () => (await import('./vouchers/index.js')).vouchersCommand(),
  },
  {
    name: 'passes',
    description: 'Passes held by members',
    load: async () => (await import('./passes/index.js')).passesCommand(),
  },
  {
    name: 'orders',
    description: 'Webshop promotion orders (device token: log in a profile with a device client)',
    load: async () => (await import('./orders/index.js')).ordersCommand(),
  },
  {
    name: 'webhooks',
    description: 'Webhook subscriptions, deliveries, signature checks and a local listener',
    load: async () => (await import('./webhooks/index.js')).webhooksCommand(),
  },
  {
    name: 'events',
    description: 'Events of the organization: send one again',
    load: async () => (await import('./events/index.js')).eventsCommand(),
  },
  {
    name: 'logs',
    description: "The organization's request log: follow API requests live, or list the latest",
    load: async () => (await import('./logs/index.js')).logsCommand(),
  },
  {
    name: 'wallet',
    description: 'Apple Wallet passes: simulate a phone that follows a pass’s updates, inspect a .pkpass offline',
    load: async () => (await import('./wallet/index.js')).walletCommand(),
  },
  {
    name: 'trigger',
    description: 'Make the server emit a real event of a type, creating test data for it (like `stripe trigger`)',
    args: ['<event-type>'],
    options: true,
    load: async () => (await import('./trigger.js')).triggerCommand(),
  },
  {
    name: 'sandbox',
    description:
      'Steer a reference server in sandbox mode (LOYALTY_SANDBOX): its clock, a reset, throwaway organizations',
    load: async () => (await import('./sandbox/index.js')).sandboxCommand(),
  },
  {
    name: 'api',
    description: 'Call any operation of the API (openapi.yaml) with the CLI’s login, retries and pacing, like `gh api`',
    args: ['<method>', '<path>'],
    options: true,
    load: async () => (await import('./api.js')).apiCommand(),
  },
  {
    name: 'completion',
    description: 'Print the shell completion script for bash, zsh or fish',
    args: ['<shell>'],
    load: async () => (await import('./completion.js')).completionCommand(),
  },
  {
    name: 'options',
    description: 'The global options every command accepts (`loyalty help options`)',
    group: 'Help topics:',
    load: async () => (await import('./help-options.js')).optionsTopicCommand(),
  },
  {
    name: '__complete',
    description: 'print completion candidates for the words given (used by the completion scripts)',
    args: ['[words...]'],
    hidden: true,
    load: async () => (await import('./completion.js')).completeCommand(),
  },
];
