import type { Command } from 'commander';
import { PartnerService } from '../../services/partners.js';
import type { ApiKeyRecord, Partner } from '../../store/store.js';
import { positiveInteger, withStore } from '../context.js';
import { emit, iso, printTable, type OutputOptions } from '../output.js';

const partnerJson = (p: Partner) => ({ id: p.id, name: p.name, createdAt: iso(p.createdAt) });
const keyJson = (k: ApiKeyRecord) => ({
  id: k.id,
  partnerId: k.partnerId,
  label: k.label,
  prefix: k.displayPrefix,
  status: k.status,
  createdAt: iso(k.createdAt),
  revokedAt: iso(k.revokedAt),
});

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
    .command('list')
    .description('list partners')
    .option('--json', 'print JSON')
    .action((options: OutputOptions) =>
      withStore(options, async (store) => {
        const list = (await new PartnerService(store).listPartners()).map(partnerJson);
        emit(options, list, () => printTable(list, ['id', 'name', 'createdAt']));
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
    .description('list API keys (prefix and status only)')
    .option('--partner <partner>', 'only this partner (id or name)')
    .option('--json', 'print JSON')
    .action((options: OutputOptions & { partner?: string }) =>
      withStore(options, async (store) => {
        const list = (await new PartnerService(store).listKeys(options.partner)).map(keyJson);
        emit(options, list, () =>
          printTable(list, ['id', 'partnerId', 'prefix', 'label', 'status', 'createdAt']),
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
}
