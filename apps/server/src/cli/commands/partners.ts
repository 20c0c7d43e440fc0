import type { Command } from 'commander';
import { keyView, PartnerService } from '../../services/partners.js';
import type { Partner } from '../../store/store.js';
import { positiveInteger, withStore } from '../context.js';
import { isoTimes } from '../../services/iso-times.js';
import { emit, iso, printTable, type OutputOptions, type Row } from '../output.js';

const partnerJson = (p: Partner) => ({
  id: p.id,
  name: p.name,
  blockedCategories: p.blockedCategories,
  createdAt: iso(p.createdAt),
});
const keyJson = (k: Parameters<typeof keyView>[0]) =>
  isoTimes(keyView(k, Date.now())) as Row & { prefix: string };
const categories = (value: string) =>
  value
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');

export function registerPartners(program: Command): void {
  const partners = program.command('partners').description('publishers that call the delivery API');
  partners
    .command('create <name>')
    .description('create a partner')
    .option('--json', 'print JSON')
    .action((name: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const partner = await new PartnerService(store).createPartner(name);
        emit(options, partnerJson(partner), () =>
          console.log(`created partner ${partner.id} "${partner.name}"`),
        );
      }),
    );
  partners
    .command('update <partner>')
    .description('rename a partner or set the categories it never receives')
    .option('--name <name>', 'new name')
    .option('--blocked-categories <list>', 'comma-separated categories; "" for none')
    .option('--json', 'print JSON')
    .action((ref: string, options: OutputOptions & { name?: string; blockedCategories?: string }) =>
      withStore(options, async (store) => {
        const partner = await new PartnerService(store).updatePartner(ref, {
          ...(options.name !== undefined && { name: options.name }),
          ...(options.blockedCategories !== undefined && {
            blockedCategories: categories(options.blockedCategories),
          }),
        });
        emit(options, partnerJson(partner), () =>
          console.log(`updated partner ${partner.id} "${partner.name}"`),
        );
      }),
    );
  partners
    .command('list')
    .description('list partners')
    .option('--json', 'print JSON')
    .action((options: OutputOptions) =>
      withStore(options, async (store) => {
        const list = (await new PartnerService(store).listPartners()).map(partnerJson);
        emit(options, list, () =>
          printTable(
            list.map((p) => ({ ...p, blockedCategories: p.blockedCategories.join(',') })),
            ['id', 'name', 'blockedCategories', 'createdAt'],
          ),
        );
      }),
    );

  const keys = program.command('keys').description("partners' API keys");
  keys
    .command('create')
    .description('create an API key; the key is printed once and cannot be shown again')
    .requiredOption('--partner <partner>', 'partner id or name')
    .option('--label <label>', 'a note to recognise the key by')
    .option('--json', 'print JSON')
    .action((options: OutputOptions & { partner: string; label?: string }) =>
      withStore(options, async (store) => {
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
      }),
    );
  keys
    .command('list')
    .description('list API keys (prefix, status and expiry only)')
    .option('--partner <partner>', 'only this partner (id or name)')
    .option('--json', 'print JSON')
    .action((options: OutputOptions & { partner?: string }) =>
      withStore(options, async (store) => {
        const list = (await new PartnerService(store).listKeys(options.partner)).map(keyJson);
        emit(options, list, () =>
          printTable(list, [
            'id',
            'partnerId',
            'prefix',
            'label',
            'status',
            'createdAt',
            'expiresAt',
            'browserRequests',
          ]),
        );
      }),
    );
  keys
    .command('revoke <id>')
    .description('revoke a key at once (every instance answers 401 within 2 s)')
    .option('--json', 'print JSON')
    .action((id: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const key = await new PartnerService(store).revokeKey(positiveInteger(id, 'key id'));
        emit(options, keyJson(key), () => console.log(`revoked key ${key.id} (${key.displayPrefix}…)`));
      }),
    );
  keys
    .command('rotate <id>')
    .description('issue a replacement key; the old one keeps working until it expires')
    .option('--expires-in-hours <hours>', 'how long the old key keeps working', '24')
    .option('--json', 'print JSON')
    .action((id: string, options: OutputOptions & { expiresInHours: string }) =>
      withStore(options, async (store) => {
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
      }),
    );
  keys
    .command('suspend <id>')
    .description('suspend a key (it gets 403 within 2 s)')
    .requiredOption('--reason <text>', 'why, for the audit log')
    .option('--json', 'print JSON')
    .action((id: string, options: OutputOptions & { reason: string }) =>
      withStore(options, async (store) => {
        const key = await new PartnerService(store).suspendKey(positiveInteger(id, 'key id'), options.reason);
        emit(options, keyJson(key), () => console.log(`suspended key ${key.id}`));
      }),
    );
  keys
    .command('reinstate <id>')
    .description('lift a suspension')
    .option('--json', 'print JSON')
    .action((id: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const key = await new PartnerService(store).reinstateKey(positiveInteger(id, 'key id'));
        emit(options, keyJson(key), () => console.log(`reinstated key ${key.id}`));
      }),
    );
  keys
    .command('limits <id>')
    .description(
      "change a key's own rate limits (requests per second and burst); limits not named keep their value",
    )
    .option('--fetch-rate <n>', 'a number, or "default"')
    .option('--fetch-burst <n>', 'a number, or "default"')
    .option('--events-rate <n>', 'a number, or "default"')
    .option('--events-burst <n>', 'a number, or "default"')
    .option('--json', 'print JSON')
    .action((id: string, options: OutputOptions & Record<string, string | undefined>) =>
      withStore(options, async (store) => {
        const limits: Record<string, number | null> = {};
        for (const name of ['fetchRate', 'fetchBurst', 'eventsRate', 'eventsBurst']) {
          const value = options[name];
          if (value !== undefined) limits[name] = value === 'default' ? null : Number(value);
        }
        const key = await new PartnerService(store).setKeyLimits(positiveInteger(id, 'key id'), limits);
        emit(options, keyJson(key), () => console.log(`set rate limits of key ${key.id}`));
      }),
    );
}
