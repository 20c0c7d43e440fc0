import fs from 'node:fs';
import type { Command } from 'commander';
import { forecastSuffix, spendJson } from '../../domain/budget-forecast.js';
import {
  budgetText,
  CAMPAIGN_STATUSES,
  readBudget,
  type Budget,
  type Campaign,
  type CampaignStatus,
  type Caps,
} from '../../domain/campaigns.js';
import { CAMPAIGN_ACTIONS, type CampaignAction } from '../../domain/lifecycle.js';
import { invalid } from '../../domain/errors.js';
import { scheduleFromText, scheduleText } from '../../domain/schedules.js';
import { formatMoneyWithCode, parseMoney, type Micros } from '../../domain/money.js';
import {
  formatPriceAmount,
  isPriceModel,
  PRICE_MODEL_LABELS,
  PRICE_MODELS,
  priceText,
  type Price,
} from '../../domain/prices.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { CampaignService, campaignRecord, campaignToJson, priceToJson } from '../../services/campaigns.js';
import { namesOf } from '../../services/names.js';
import { PacingJob } from '../../jobs/pacing-job.js';
import { frequencyCapsFromText } from '../../domain/frequency-caps.js';
import { explainCampaign, type WhyQuery } from '../../services/serving-explainer.js';
import { ServingState } from '../../serving/serving-state.js';
import { idAction, inStore, jsonOption, positiveInteger, recordAction, storeAction } from '../context.js';
import { counted, emit, iso, printTable, type OutputOptions } from '../output.js';

const list = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw invalid(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

const summaryRow = (c: Campaign, advertiserName: string | undefined) => ({
  id: c.id,
  advertiser: c.advertiserId,
  advertiserName,
  status: c.status,
  priority: c.priority,
  weight: c.weight,
  placements: c.placements.join(','),
  countries: c.countries.join(',') || '*',
  devices: c.devices.join(',') || '*',
  title: c.title.length > 40 ? `${c.title.slice(0, 39)}…` : c.title,
});

const PRICE_FORMAT = `none, or model:amount in units of the currency such as cpm:2.50 (models ${PRICE_MODELS.join(', ')})`;

/**
 * A price as `--price` takes it: `none`, or a model and an amount in units of the currency
 * (`cpm:2.50`, `cpc:0.35`, `flat:1,500`), read exactly into micros.
 */
export function priceOption(text: string): Price | null {
  if (text.trim().toLowerCase() === 'none') return null;
  const [model, amount] = text.split(/:(.*)/s).map((part) => part.trim().toLowerCase());
  if (!isPriceModel(model) || amount === undefined) throw invalid(`--price must be ${PRICE_FORMAT}`);
  const amountMicros = parseMoney(amount, 'price');
  if (amountMicros === 0)
    throw invalid('price must be more than 0: leave a campaign without one with --price none');
  return { model, amountMicros };
}

export const BUDGET_FORMAT = 'an amount in units of the currency such as 500.00, or none';

/** A budget as `--budget-total` and `--budget-daily` take it: `none`, or units read exactly into micros. */
export function budgetOption(text: string, flag: string): Micros | null {
  if (text.trim().toLowerCase() === 'none') return null;
  const amount = parseMoney(text.trim(), flag);
  if (amount === 0) throw invalid(`${flag} must be more than 0: ${BUDGET_FORMAT}`);
  return amount;
}

/** A campaign's budget with the ones the options name changed (each given alone keeps the other). */
function budgetFrom(
  options: { budgetTotal?: string; budgetDaily?: string },
  current: Budget,
): Budget | undefined {
  if (options.budgetTotal === undefined && options.budgetDaily === undefined) return undefined;
  return {
    totalMicros:
      options.budgetTotal === undefined
        ? current.totalMicros
        : budgetOption(options.budgetTotal, '--budget-total'),
    dailyMicros:
      options.budgetDaily === undefined
        ? current.dailyMicros
        : budgetOption(options.budgetDaily, '--budget-daily'),
  };
}

/** A field of `campaigns show`: lists joined, caps as `name value` pairs, absent values as "-". */
function shownValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(', ') || '(all)';
  if (value !== null && typeof value === 'object') {
    const set = Object.entries(value).filter(([, item]) => item !== null);
    return set.map(([name, item]) => `${name} ${String(item)}`).join(', ') || '(none)';
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '-';
}

/** Cap options of `campaigns update`, named after the fields of `caps` in the import format. */
const CAP_OPTIONS: ReadonlyArray<[keyof Caps, string]> = [
  ['impressionsTotal', '--impressions-total <n>'],
  ['impressionsDaily', '--impressions-daily <n>'],
  ['clicksTotal', '--clicks-total <n>'],
  ['clicksDaily', '--clicks-daily <n>'],
];

interface UpdateOptions extends OutputOptions, Partial<Record<keyof Caps, string>> {
  title?: string;
  description?: string;
  category?: string;
  destinationUrl?: string;
  priority?: string;
  weight?: string;
  placements?: string;
  countries?: string;
  devices?: string;
  start?: string;
  end?: string;
  timeZone?: string;
  pacing?: string;
  frequencyCaps?: string;
  schedule?: string;
  price?: string;
  budgetTotal?: string;
  budgetDaily?: string;
}

/**
 * Turns update flags into changed fields in the import format; "" clears an optional field. Caps
 * not named keep their current value (`caps` is replaced as a whole by an update).
 */
function changesFrom(options: UpdateOptions, current: Campaign): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  const text = (value: string | undefined) => (value === '' ? null : value);
  const number = (value: string) => (value === '' ? null : /^-?\d+$/.test(value) ? Number(value) : value);
  if (options.title !== undefined) changes['title'] = options.title;
  if (options.description !== undefined) changes['description'] = text(options.description);
  if (options.category !== undefined) changes['category'] = text(options.category);
  if (options.destinationUrl !== undefined) changes['destinationUrl'] = options.destinationUrl;
  if (options.priority !== undefined) changes['priority'] = number(options.priority);
  if (options.weight !== undefined) changes['weight'] = number(options.weight);
  if (options.placements !== undefined) changes['placements'] = list(options.placements);
  if (options.countries !== undefined) changes['countries'] = list(options.countries);
  if (options.devices !== undefined) changes['devices'] = list(options.devices);
  if (options.start !== undefined) changes['startAt'] = text(options.start);
  if (options.end !== undefined) changes['endAt'] = text(options.end);
  if (options.timeZone !== undefined) changes['timeZone'] = options.timeZone;
  if (options.pacing !== undefined) changes['pacing'] = options.pacing;
  if (options.frequencyCaps !== undefined)
    changes['frequencyCaps'] = frequencyCapsFromText(options.frequencyCaps);
  if (options.schedule !== undefined) changes['schedule'] = scheduleOption(options.schedule);
  if (options.price !== undefined) changes['price'] = priceToJson(priceOption(options.price));
  const budget = budgetFrom(options, current.budget);
  if (budget !== undefined) changes['budget'] = budget;
  const caps: Record<string, unknown> = { ...current.caps };
  const capsNamed = CAP_OPTIONS.filter(([name]) => options[name] !== undefined);
  for (const [name] of capsNamed) caps[name] = number(options[name] as string) ?? null;
  if (capsNamed.length > 0) changes['caps'] = caps;
  if (Object.keys(changes).length === 0) throw invalid('nothing to change: give at least one field option');
  return changes;
}

/** `--schedule` in the API's form; what it cannot read is refused naming the flag. */
function scheduleOption(text: string): Record<string, number[][]> | null {
  try {
    return scheduleFromText(text);
  } catch (error) {
    throw invalid(`--schedule ${(error as Error).message}`);
  }
}

export function registerCampaigns(program: Command): void {
  const campaigns = program.command('campaigns').description("advertisers' campaigns");
  storeAction(
    campaigns
      .command('import <file>')
      .description('import advertisers and campaigns from a JSON file (all or nothing)')
      .option(
        '--approve',
        'approve the campaigns: only then may they be scheduled, running, paused or completed (audited)',
      ),
    async ({ store }, options: OutputOptions & { approve?: boolean }, file: string) => {
      const summary = await new CampaignService(store).import(readJsonFile(file), {
        approve: options.approve === true,
      });
      emit(options, summary, () =>
        console.log(
          `imported ${counted(summary.campaignsCreated, 'campaign')} ` +
            `(${counted(summary.advertisersCreated, 'new advertiser')}, ${summary.advertisersExisting} existing); ` +
            `ids ${summary.campaignIds.join(', ')}`,
        ),
      );
    },
  );
  storeAction(
    campaigns
      .command('list')
      .description('list campaigns')
      .option('--status <status>', `only this status (${CAMPAIGN_STATUSES.join(', ')})`)
      .option('--placement <placement>', 'only campaigns targeting this placement')
      .option('--advertiser <id>', 'only this advertiser'),
    async (
      { store },
      options: OutputOptions & { status?: string; placement?: string; advertiser?: string },
    ) => {
      if (
        options.status !== undefined &&
        !(CAMPAIGN_STATUSES as readonly string[]).includes(options.status)
      ) {
        throw invalid(`status must be one of: ${CAMPAIGN_STATUSES.join(', ')}`);
      }
      const found = await new CampaignService(store).list({
        ...(options.status !== undefined && { status: options.status as CampaignStatus }),
        ...(options.placement !== undefined && { placement: options.placement }),
        ...(options.advertiser !== undefined && {
          advertiserId: positiveInteger(options.advertiser, 'advertiser'),
        }),
      });
      const names = await namesOf(store, CLI_ACTOR, { advertiser: found.map((c) => c.advertiserId) });
      emit(options, found.map(campaignToJson), () =>
        printTable(
          found.map((c) => summaryRow(c, names.advertiser.get(c.advertiserId))),
          [
            'id',
            'advertiser',
            'advertiserName',
            'status',
            'priority',
            'weight',
            'placements',
            'countries',
            'devices',
            'title',
          ],
        ),
      );
    },
  );
  storeAction(
    campaigns.command('show <id>').description('show one campaign'),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const service = new CampaignService(store);
      const campaign = await service.get(positiveInteger(id, 'campaign id'));
      const { currency } = config;
      const spend = await service.budgetSpend(campaign.id);
      emit(options, { ...campaignRecord(campaign, currency), spend: spendJson(spend, currency) }, () => {
        for (const [field, value] of Object.entries(campaignToJson(campaign)))
          console.log(
            `${field.padEnd(15)} ${
              field === 'price'
                ? priceText(campaign.price, currency)
                : field === 'budget'
                  ? budgetText(campaign.budget, currency)
                  : field === 'schedule'
                    ? scheduleText(campaign.schedule)
                    : shownValue(value)
            }`,
          );
        const money = (amount: Micros) => formatMoneyWithCode(amount, currency);
        const today = `${money(spend.dayMicros)}${forecastSuffix(spend.forecast.daily)}`;
        console.log(`${`spend ${spend.day}`.padEnd(15)} ${today}`);
        console.log(`spend in total  ${money(spend.totalMicros)}${forecastSuffix(spend.forecast.total)}`);
      });
    },
  );
  storeAction(
    campaigns
      .command('prices <id>')
      .description(
        'every price a campaign has had, newest (the one in force) first, with what was billed at it',
      ),
    async ({ store, config }, options: OutputOptions, id: string) => {
      const prices = await new CampaignService(store).prices(positiveInteger(id, 'campaign id'));
      const { currency } = config;
      emit(
        options,
        prices.map((entry) => ({
          since: iso(entry.since),
          model: entry.price?.model ?? null,
          amountMicros: entry.price?.amountMicros ?? null,
          currency,
          setBy: entry.setBy,
          billedUnits: entry.billedUnits,
          spendMicros: entry.spendMicros,
        })),
        () =>
          printTable(
            prices.map((entry) => ({
              since: iso(entry.since),
              model: entry.price === null ? 'none' : PRICE_MODEL_LABELS[entry.price.model],
              amount:
                entry.price === null
                  ? null
                  : `${currency} ${formatPriceAmount(entry.price.amountMicros, currency)}`,
              setBy: entry.setBy,
              billedUnits: entry.billedUnits,
              spend: formatMoneyWithCode(entry.spendMicros, currency),
            })),
            ['since', 'model', 'amount', 'setBy', 'billedUnits', 'spend'],
          ),
      );
    },
  );
  const update = campaigns
    .command('update <id>')
    .description('change fields of a campaign (status changes through actions); served within 2 s')
    .option('--title <text>')
    .option('--description <text>', '"" removes it')
    .option('--category <word>', '"" removes it')
    .option('--destination-url <url>')
    .option('--priority <n>', 'higher is served first')
    .option('--weight <n>', 'share of rotation within a priority')
    .option('--placements <ids>', 'comma-separated placement ids')
    .option('--countries <codes>', 'comma-separated country codes; "" for every country')
    .option('--devices <types>', 'comma-separated device types; "" for every device')
    .option('--start <iso>', 'start time (ISO 8601); "" removes it')
    .option('--end <iso>', 'end time (ISO 8601); "" removes it')
    .option('--time-zone <iana>', 'the time zone daily caps count days in, such as Europe/Paris')
    .option(
      '--pacing <pacing>',
      'asap (as fast as it is drawn) or even (each cap spread over its day or flight)',
    )
    .option(
      '--frequency-caps <caps>',
      'at most N impressions per viewer per hour, day or week, such as 3/day,10/week; "" removes them (only events with a viewer count)',
    )
    .option(
      '--schedule <hours>',
      'the hours of the week it may run, in its time zone, such as "mon-fri 9-17; sat 10-14"; "" or always: every hour',
    )
    .option('--price <price>', `what the advertiser is charged: ${PRICE_FORMAT}`)
    .option('--budget-total <amount>', `what its events may cost in all: ${BUDGET_FORMAT}`)
    .option('--budget-daily <amount>', `what its events may cost per local day: ${BUDGET_FORMAT}`);
  for (const [name, flag] of CAP_OPTIONS)
    update.option(flag, `caps.${name}: a positive integer; "" removes the cap (the others keep theirs)`);
  idAction('campaign id', campaignToJson)(
    update,
    async (store, id, options: UpdateOptions) => {
      const service = new CampaignService(store);
      return service.update(id, changesFrom(options, await service.get(id)));
    },
    (campaign) => `updated campaign ${campaign.id} (${campaign.status})`,
  );
  recordAction(campaignToJson)(
    campaigns
      .command('create <file>')
      .description('create a draft campaign from a JSON file of campaign fields (import format)')
      .requiredOption('--advertiser <id>', 'advertiser id')
      .option(
        '--price <price>',
        `what the advertiser is charged (instead of the file's price): ${PRICE_FORMAT}`,
      )
      .option('--budget-total <amount>', `what its events may cost in all: ${BUDGET_FORMAT}`)
      .option('--budget-daily <amount>', `what its events may cost per local day: ${BUDGET_FORMAT}`),
    (
      store,
      options: { advertiser: string; price?: string; budgetTotal?: string; budgetDaily?: string },
      file,
    ) => {
      const fields = readJsonFile(file) as Record<string, unknown>;
      const fileBudget = readBudget(fields['budget'], 'budget', []);
      const budget = budgetFrom(options, fileBudget);
      return new CampaignService(store).create(positiveInteger(options.advertiser, 'advertiser'), {
        ...fields,
        ...(options.price === undefined ? {} : { price: priceToJson(priceOption(options.price)) }),
        ...(budget === undefined ? {} : { budget }),
      });
    },
    (campaign) => `created campaign ${campaign.id} (draft)`,
  );
  storeAction(
    campaigns
      .command('why <id>')
      .description("why a campaign is or is not served now, for a fetch like the options' (D3, D4)")
      .option('--placement <id>', 'the placement fetched (with it, an eligible campaign gets its chance)')
      .option('--location <country>', 'the country fetched from')
      .option('--device <type>', 'the device fetched from: mobile, desktop or tablet')
      .option('--key <id>', "an API key id: its partner's blocked categories apply")
      .option('--limit <n>', 'campaigns a fetch asks for (default 10)'),
    async ({ store }, options: OutputOptions & WhyQuery, id: string) => {
      const { placement, location, device, key, limit } = options;
      // The chance is drawn against the running campaigns, read as a serving instance reads them.
      const quiet = { info: () => undefined, error: () => undefined };
      const state = new ServingState(store, quiet, 0);
      if (placement !== undefined) await state.load();
      // This process serves nothing, so it takes one pacing step as a serving instance's job
      // does, from the same counters and traffic, to know how pacing holds the campaign (D16).
      const now = Date.now();
      await new PacingJob(store, state, quiet, () => now).step();
      const explanation = await explainCampaign(
        store,
        CLI_ACTOR,
        state.index,
        now,
        positiveInteger(id, 'campaign id'),
        { placement, location, device, key, limit },
        (campaignId) => state.paceOf(campaignId),
      );
      emit(options, explanation, () => {
        for (const reason of explanation.reasons) console.log(`${reason.code.padEnd(23)} ${reason.message}`);
        if (explanation.eligible) console.log(`campaign ${explanation.campaignId} is eligible`);
        for (const note of explanation.notes) console.log(`note: ${note}`);
        const chance = explanation.chance;
        if (chance)
          console.log(
            `${chance.ahead} eligible campaigns come first (a higher priority), ${chance.rivals} share its priority; ` +
              `it has ${(chance.weightShare * 100).toFixed(1)}% of its priority's weight and is in ` +
              `${(chance.inResponse * 100).toFixed(1)}% of fetches of ${chance.limit}`,
          );
      });
    },
  );
  for (const action of CAMPAIGN_ACTIONS) {
    const command = jsonOption(campaigns.command(`${action} <id>`).description(ACTION_HELP[action]));
    if (action === 'reject') command.requiredOption('--reason <text>', 'why, shown to the advertiser');
    else command.option('--reason <text>', 'why, for the audit log');
    command.action(
      inStore(async ({ store }, options: OutputOptions & { reason?: string }, id: string) => {
        const campaign = await new CampaignService(store).act(
          positiveInteger(id, 'campaign id'),
          action,
          options.reason,
        );
        emit(options, campaignToJson(campaign), () =>
          console.log(`campaign ${campaign.id} is now ${campaign.status}`),
        );
      }),
    );
  }
}

const ACTION_HELP: Record<CampaignAction, string> = {
  submit: 'send a draft for review',
  approve: 'approve a campaign in review (it becomes scheduled or running)',
  reject: 'reject a campaign in review, with a reason',
  pause: 'stop serving a running or scheduled campaign',
  resume: 'serve a paused campaign again',
  archive: 'retire a campaign for good',
};
