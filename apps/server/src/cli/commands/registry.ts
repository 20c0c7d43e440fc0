import type { Command } from 'commander';
import { forecastSuffix, spendJson } from '../../domain/budget-forecast.js';
import {
  advertiserBudgetText,
  NO_ADVERTISER_BUDGET,
  type AdvertiserBudget,
} from '../../domain/advertiser-budgets.js';
import { formatMoney, type Micros } from '../../domain/money.js';
import { advertiserPricingText } from '../../domain/prices.js';
import { BUDGET_FORMAT, budgetOption } from './campaigns.js';
import { isoTimes } from '../../services/iso-times.js';
import { AdvertiserService } from '../../services/advertisers.js';
import { auditedName } from '../../services/names.js';
import { PlacementService } from '../../services/placements.js';
import type { Advertiser, Placement } from '../../store/store.js';
import { positiveInteger, recordAction, storeAction } from '../context.js';
import { emit, iso, printTable, type OutputOptions, type Row } from '../output.js';

/** A command printing the advertiser, or the placement, it answers. */
const advertiserAction = recordAction<Advertiser>(isoTimes);
const placementAction = recordAction((placement: Placement) => placement);

/** `--budget-total`, `--budget-monthly` and `--pricing` as given. */
interface BudgetOptions {
  budgetTotal?: string;
  budgetMonthly?: string;
  pricing?: string;
}

/** The options `advertisers create` and `update` share: who prices its campaigns, its budgets. */
const budgetOptions = (command: Command): Command =>
  command
    .option(
      '--pricing <who>',
      `who sets its campaigns' prices (D18): operator (the operator alone, the default) or advertiser (its own people too)`,
    )
    .option('--budget-total <amount>', `what all its campaigns may spend in all: ${BUDGET_FORMAT}`)
    .option(
      '--budget-monthly <amount>',
      `what all its campaigns may spend per billing month (PLACARD_BILLING_TIME_ZONE): ${BUDGET_FORMAT}`,
    );

/** An advertiser's budgets with the ones the options name changed (each given alone keeps the other). */
function advertiserBudgetFrom(
  options: BudgetOptions,
  current: AdvertiserBudget,
): AdvertiserBudget | undefined {
  if (options.budgetTotal === undefined && options.budgetMonthly === undefined) return undefined;
  return {
    totalMicros:
      options.budgetTotal === undefined
        ? current.totalMicros
        : budgetOption(options.budgetTotal, '--budget-total'),
    monthlyMicros:
      options.budgetMonthly === undefined
        ? current.monthlyMicros
        : budgetOption(options.budgetMonthly, '--budget-monthly'),
  };
}

/** An advertiser's budgets and who prices its campaigns, as the commands print them. */
const advertiserText = (advertiser: Advertiser, currency: string): string =>
  `budget: ${advertiserBudgetText(advertiser.budget, currency)}, prices set by ${advertiserPricingText(advertiser.pricing)}`;

/** An advertiser as `--json` prints it: times in ISO 8601, its budgets naming the currency. */
const advertiserJson = (advertiser: Advertiser, currency: string) => ({
  ...(isoTimes(advertiser) as Record<string, unknown>),
  budget: { ...advertiser.budget, currency },
});

/** Advertisers, placements and the audit log. */
export function registerRegistry(program: Command): void {
  const advertisers = program.command('advertisers').description('the accounts campaigns belong to');
  storeAction(
    budgetOptions(advertisers.command('create <name>').description('create an advertiser')),
    async ({ store, config }, options: OutputOptions & BudgetOptions, name: string) => {
      const service = new AdvertiserService(store);
      let advertiser = await service.create(name);
      if (options.pricing !== undefined)
        advertiser = await service.setPricing(advertiser.id, options.pricing);
      const budget = advertiserBudgetFrom(options, NO_ADVERTISER_BUDGET);
      if (budget !== undefined) advertiser = await service.setBudget(advertiser.id, budget);
      emit(options, advertiserJson(advertiser, config.currency), () =>
        console.log(
          `created advertiser ${advertiser.id} "${advertiser.name}", ${advertiserText(advertiser, config.currency)}`,
        ),
      );
    },
  );
  storeAction(
    advertisers.command('list').description('list advertisers'),
    async ({ store }, options: OutputOptions) => {
      const list = (await new AdvertiserService(store).list({ limit: 1_000_000 })).map(
        (a) => isoTimes(a) as Row,
      );
      emit(options, list, () => printTable(list, ['id', 'name', 'pricing', 'createdAt']));
    },
  );
  advertiserAction(
    advertisers.command('rename <id> <name>').description('rename an advertiser'),
    (store, _options, id, name) =>
      new AdvertiserService(store).rename(positiveInteger(id, 'advertiser id'), name),
    (advertiser) => `renamed advertiser ${advertiser.id} to "${advertiser.name}"`,
  );
  storeAction(
    budgetOptions(
      advertisers
        .command('update <id>')
        .description(
          "set an advertiser's budgets and who prices its campaigns (D18): each option given alone keeps the others",
        )
        .option('--name <name>', 'rename it'),
    ),
    async ({ store, config }, options: OutputOptions & BudgetOptions & { name?: string }, id: string) => {
      const service = new AdvertiserService(store);
      const advertiserId = positiveInteger(id, 'advertiser id');
      let advertiser = await service.get(advertiserId);
      if (options.name !== undefined) advertiser = await service.rename(advertiserId, options.name);
      if (options.pricing !== undefined) advertiser = await service.setPricing(advertiserId, options.pricing);
      const budget = advertiserBudgetFrom(options, advertiser.budget);
      if (budget !== undefined) advertiser = await service.setBudget(advertiserId, budget);
      emit(options, advertiserJson(advertiser, config.currency), () =>
        console.log(
          `advertiser ${advertiser.id} "${advertiser.name}", ${advertiserText(advertiser, config.currency)}`,
        ),
      );
    },
  );
  storeAction(
    advertisers.command('show <id>').description('show an advertiser, its budgets and its spend'),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const service = new AdvertiserService(store);
      const advertiser = await service.get(positiveInteger(id, 'advertiser id'));
      const spend = await service.spend(advertiser.id);
      const { currency } = config;
      emit(
        options,
        {
          ...advertiserJson(advertiser, currency),
          spend: spendJson({ ...spend, counted: undefined, monthEnd: undefined }, currency),
        },
        () => {
          const money = (amount: Micros) => `${currency} ${formatMoney(amount, currency)}`;
          const { forecast } = spend;
          console.log(`id              ${advertiser.id}`);
          console.log(`name            ${advertiser.name}`);
          console.log(`budget          ${advertiserBudgetText(advertiser.budget, currency)}`);
          console.log(`prices set by   ${advertiserPricingText(advertiser.pricing)}`);
          console.log(
            `${`spend ${spend.month}`.padEnd(15)} ${money(spend.monthMicros)}${forecastSuffix(forecast.month)}`,
          );
          console.log(`spend in total  ${money(spend.totalMicros)}${forecastSuffix(forecast.total)}`);
        },
      );
    },
  );

  const placements = program.command('placements').description('the ad slots campaigns run in');
  storeAction(
    placements.command('list').description('list placements'),
    async ({ store }, options: OutputOptions) => {
      const list = await new PlacementService(store).list();
      emit(options, list, () =>
        printTable(
          list.map((p) => ({ ...p })),
          ['id', 'enabled', 'description'],
        ),
      );
    },
  );
  placementAction(
    placements.command('add <id> <description>').description('add a placement (id: a lower-case slug)'),
    (store, _options, id, description) => new PlacementService(store).add(id, description),
    (placement) => `added placement ${placement.id}`,
  );
  placementAction(
    placements.command('describe <id> <description>').description("change a placement's description"),
    (store, _options, id, description) => new PlacementService(store).update(id, { description }),
    (placement) => `described placement ${placement.id}`,
  );
  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    placementAction(
      placements
        .command(`${name} <id>`)
        .description(
          enabled ? 'serve a placement again' : 'stop serving a placement (fetch answers 400 within 2 s)',
        ),
      (store, _options, id) => new PlacementService(store).update(id, { enabled }),
      (placement) => `placement ${placement.id} is ${enabled ? 'enabled' : 'disabled'}`,
    );
  }

  storeAction(
    program
      .command('audit')
      .description('list the latest entries of the audit log, oldest of them first (like tail)')
      .option('--type <type>', 'partner, api_key, admin_token, advertiser, campaign or placement')
      .option('--id <id>', 'one object')
      .option('--limit <n>', 'the latest this many entries', '200'),
    async ({ store }, options: OutputOptions & { type?: string; id?: string; limit: string }) => {
      const latest = await store.listAudit(
        { ...(options.type && { objectType: options.type }), ...(options.id && { objectId: options.id }) },
        { limit: positiveInteger(options.limit, 'limit'), newestFirst: true },
      );
      const entries = latest.reverse();
      emit(options, entries.map(isoTimes), () =>
        printTable(
          entries.map((e) => ({
            id: e.id,
            at: iso(e.at),
            actor: e.actor,
            object: `${e.objectType} ${e.objectId}`,
            name: auditedName(e),
            action: e.action,
            reason: e.reason,
          })),
          ['id', 'at', 'actor', 'object', 'name', 'action', 'reason'],
        ),
      );
    },
  );
}
