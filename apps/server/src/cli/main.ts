#!/usr/bin/env node
// First, before the rest of the process can collect garbage (see tick-shape.ts).
import './tick-shape.js';
import { Command } from 'commander';
import { registerCampaigns } from './commands/campaigns.js';
import { registerDemo } from './commands/demo.js';
import { registerFlags } from './commands/flags.js';
import { registerMigrate } from './commands/migrate.js';
import { registerMoney } from './commands/money.js';
import { registerPartners } from './commands/partners.js';
import { registerRegistry } from './commands/registry.js';
import { registerReport } from './commands/report.js';
import { registerServe } from './commands/serve.js';
import { registerStatements } from './commands/statements.js';
import { registerTokens } from './commands/tokens.js';
import { registerUsers } from './commands/users.js';
import { registerWebhooks } from './commands/webhooks.js';

/** The `placard` command. Configuration comes from PLACARD_* environment variables (see README). */
const program = new Command('placard')
  .description('Placard: advertising campaign delivery service')
  .showHelpAfterError()
  .exitOverride((error) => {
    // Commander's own usage errors: exit 2, like other command-line tools.
    process.exit(error.exitCode === 0 ? 0 : 2);
  });

registerServe(program);
registerMigrate(program);
registerPartners(program);
registerFlags(program);
registerCampaigns(program);
registerRegistry(program);
registerReport(program);
registerMoney(program);
registerStatements(program);
registerTokens(program);
registerUsers(program);
registerWebhooks(program);
registerDemo(program);

await program.parseAsync(process.argv);
