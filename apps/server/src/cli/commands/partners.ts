import type { Command } from 'commander';
import { CLI_ACTOR } from '../../services/audit.js';
import { namesOf } from '../../services/names.js';
import { keyView, PartnerService } from '../../services/partners.js';
import { RevenueShareService } from '../../services/revenue-shares.js';
import type { Partner } from '../../store/store.js';
import { idAction, positiveInteger, recordAction, storeAction } from '../context.js';
import { isoTimes } from '../../services/iso-times.js';
import { emit, iso, printTable, type OutputOptions, type Row } from '../output.js';

const partnerJson = (p: Partner) => ({
  id: p.id,
  name: p.name,
  blockedCategories: p.blockedCategories,
  blockedAdvertisers: p.blockedAdvertisers,
  createdAt: iso(p.createdAt),
});
const keyJson = (k: Parameters<typeof keyView>[0]) =>
  isoTimes(keyView(k, Date.now())) as Row & { prefix: string };
/** A command on one key by its id, printing the key it answers. */
const keyAction = idAction('key id', keyJson);
/** A command printing the partner it answers. */
const partnerAction = recordAction(partnerJson);
const categories = (value: string) =>
  value
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
/** `3,5` as typed: advertiser ids; anything else goes to the service as typed, which refuses it. */
const advertiserIds = (value: string) => categories(value).map((id) => (/^\d+$/.test(id) ? Number(id) : id));

export function registerPartners(program: Command): void {
  const partners = program.command('partners').description('publishers that call the delivery API');
  partnerAction(
    partners.command('create <name>').description('create a partner'),
    (store, _options, name) => new PartnerService(store).createPartner(name),
    (partner) => `created partner ${partner.id} "${partner.name}"`,
  );
  partnerAction(
    partners
      .command('update <partner>')
      .description('rename a partner or set the categories and advertisers it never receives')
      .option('--name <name>', 'new name')
      .option('--blocked-categories <list>', 'comma-separated categories; "" for none')
      .option('--blocked-advertisers <ids>', 'comma-separated advertiser ids; "" for none'),
    (store, options: { name?: string; blockedCategories?: string; blockedAdvertisers?: string }, ref) =>
      new PartnerService(store).updatePartner(ref, {
        ...(options.name !== undefined && { name: options.name }),
        ...(options.blockedCategories !== undefined && {
          blockedCategories: categories(options.blockedCategories),
        }),
        ...(options.blockedAdvertisers !== undefined && {
          blockedAdvertisers: advertiserIds(options.blockedAdvertisers),
        }),
      }),
    (partner) => `updated partner ${partner.id} "${partner.name}"`,
  );
  storeAction(
    partners.command('list').description('list partners'),
    async ({ store }, options: OutputOptions) => {
      const list = (await new PartnerService(store).listPartners()).map(partnerJson);
      emit(options, list, () =>
        printTable(
          list.map((p) => ({
            ...p,
            blockedCategories: p.blockedCategories.join(','),
            blockedAdvertisers: p.blockedAdvertisers.join(','),
          })),
          ['id', 'name', 'blockedCategories', 'blockedAdvertisers', 'createdAt'],
        ),
      );
    },
  );

  storeAction(
    partners
      .command('share <partner>')
      .description(
        "set a partner's revenue share from a billing date on (PLACARD_BILLING_TIME_ZONE): today or later",
      )
      .requiredOption('--basis-points <n>', 'of each charged event’s cost, 0 to 10000 (7000 is 70%)')
      .requiredOption('--from <date>', 'the date it takes effect, YYYY-MM-DD; today applies from now'),
    async ({ store, config }, options: OutputOptions & { basisPoints: string; from: string }, ref) => {
      const service = new RevenueShareService(store, CLI_ACTOR, Date.now, config.billingTimeZone);
      // Digits are a number of basis points; anything else goes as typed, for the service to refuse.
      const basisPoints = /^\d+$/.test(options.basisPoints)
        ? Number(options.basisPoints)
        : options.basisPoints;
      const share = await service.set(ref, { basisPoints, effectiveDate: options.from });
      emit(options, isoTimes(share), () =>
        console.log(
          `partner ${ref} earns ${share.percent}% from ${share.effectiveDate} (${share.effectiveFrom}, share ${share.id})`,
        ),
      );
    },
  );
  storeAction(
    partners
      .command('shares <partner>')
      .description("a partner's revenue shares, the latest to take effect first"),
    async ({ store, config }, options: OutputOptions, ref) => {
      const service = new RevenueShareService(store, CLI_ACTOR, Date.now, config.billingTimeZone);
      const list = (await service.list(ref)).map((share) => isoTimes(share) as Row);
      emit(options, list, () =>
        printTable(list, [
          'id',
          'effectiveDate',
          'percent',
          'basisPoints',
          'effectiveFrom',
          'setBy',
          'createdAt',
        ]),
      );
    },
  );

  const keys = program.command('keys').description("partners' API keys");
  storeAction(
    keys
      .command('create')
      .description('create an API key; the key is printed once and cannot be shown again')
      .requiredOption('--partner <partner>', 'partner id or name')
      .option('--label <label>', 'a note to recognise the key by'),
    async ({ store }, options: OutputOptions & { partner: string; label?: string }) => {
      const { key, plaintext } = await new PartnerService(store).createKey(
        options.partner,
        options.label ?? null,
      );
      emit(options, { ...keyJson(key), key: plaintext }, () => {
        console.log(
          `created key ${key.id} for partner ${key.partnerId}. Store it now; it is not shown again:`,
        );
        console.log(plaintext);
      });
    },
  );
  storeAction(
    keys
      .command('list')
      .description('list API keys (prefix, status and expiry only)')
      .option('--partner <partner>', 'only this partner (id or name)'),
    async ({ store }, options: OutputOptions & { partner?: string }) => {
      const found = await new PartnerService(store).listKeys(options.partner);
      const list = found.map(keyJson);
      const names = await namesOf(store, CLI_ACTOR, { partner: found.map((key) => key.partnerId) });
      emit(options, list, () =>
        printTable(
          found.map((key, i) => ({ ...list[i]!, partnerName: names.partner.get(key.partnerId) })),
          [
            'id',
            'partnerId',
            'partnerName',
            'prefix',
            'label',
            'status',
            'createdAt',
            'expiresAt',
            'browserRequests',
          ],
        ),
      );
    },
  );
  keyAction(
    keys.command('revoke <id>').description('revoke a key at once (every instance answers 401 within 2 s)'),
    (store, id) => new PartnerService(store).revokeKey(id),
    (key) => `revoked key ${key.id} (${key.displayPrefix}…)`,
  );
  storeAction(
    keys
      .command('rotate <id>')
      .description('issue a replacement key; the old one keeps working until it expires')
      .option('--expires-in-hours <hours>', 'how long the old key keeps working', '24'),
    async ({ store }, options: OutputOptions & { expiresInHours: string }, id: string) => {
      const hours = Number(options.expiresInHours);
      const rotated = await new PartnerService(store).rotateKey(positiveInteger(id, 'key id'), hours);
      emit(
        options,
        { ...keyJson(rotated.key), key: rotated.plaintext, previous: keyJson(rotated.previous) },
        () => {
          console.log(
            `key ${id} now expires at ${iso(rotated.previous.expiresAt)}; its replacement is key ${rotated.key.id}.`,
          );
          console.log('Store the new key now; it is not shown again:');
          console.log(rotated.plaintext);
        },
      );
    },
  );
  keyAction(
    keys
      .command('suspend <id>')
      .description('suspend a key (it gets 403 within 2 s)')
      .requiredOption('--reason <text>', 'why, for the audit log'),
    (store, id, options: { reason: string }) => new PartnerService(store).suspendKey(id, options.reason),
    (key) => `suspended key ${key.id}`,
  );
  keyAction(
    keys.command('reinstate <id>').description('lift a suspension'),
    (store, id) => new PartnerService(store).reinstateKey(id),
    (key) => `reinstated key ${key.id}`,
  );
  keyAction(
    keys
      .command('limits <id>')
      .description(
        "change a key's own rate limits (requests per second and burst); limits not named keep their value",
      )
      .option('--fetch-rate <n>', 'a number, or "default"')
      .option('--fetch-burst <n>', 'a number, or "default"')
      .option('--events-rate <n>', 'a number, or "default"')
      .option('--events-burst <n>', 'a number, or "default"'),
    (store, id, options: OutputOptions & Record<string, string | undefined>) => {
      const limits: Record<string, number | null> = {};
      for (const name of ['fetchRate', 'fetchBurst', 'eventsRate', 'eventsBurst']) {
        const value = options[name];
        if (value !== undefined) limits[name] = value === 'default' ? null : Number(value);
      }
      return new PartnerService(store).setKeyLimits(id, limits);
    },
    (key) => `set rate limits of key ${key.id}`,
  );
}
