import type { Command } from 'commander';
import { isoTimes } from '../../services/iso-times.js';
import { AdvertiserService } from '../../services/advertisers.js';
import { PlacementService } from '../../services/placements.js';
import { positiveInteger, withStore } from '../context.js';
import { emit, iso, printTable, type OutputOptions, type Row } from '../output.js';

/** Advertisers, placements and the audit log. */
export function registerRegistry(program: Command): void {
  const advertisers = program.command('advertisers').description('the accounts campaigns belong to');
  advertisers
    .command('create <name>')
    .description('create an advertiser')
    .option('--json', 'print JSON')
    .action((name: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const advertiser = await new AdvertiserService(store).create(name);
        emit(options, isoTimes(advertiser), () =>
          console.log(`created advertiser ${advertiser.id} "${advertiser.name}"`),
        );
      }),
    );
  advertisers
    .command('list')
    .description('list advertisers')
    .option('--json', 'print JSON')
    .action((options: OutputOptions) =>
      withStore(options, async (store) => {
        const list = (await new AdvertiserService(store).list({ limit: 1_000_000 })).map(
          (a) => isoTimes(a) as Row,
        );
        emit(options, list, () => printTable(list, ['id', 'name', 'createdAt']));
      }),
    );
  advertisers
    .command('rename <id> <name>')
    .description('rename an advertiser')
    .option('--json', 'print JSON')
    .action((id: string, name: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const advertiser = await new AdvertiserService(store).rename(
          positiveInteger(id, 'advertiser id'),
          name,
        );
        emit(options, isoTimes(advertiser), () =>
          console.log(`renamed advertiser ${advertiser.id} to "${advertiser.name}"`),
        );
      }),
    );

  const placements = program.command('placements').description('the ad slots campaigns run in');
  placements
    .command('list')
    .description('list placements')
    .option('--json', 'print JSON')
    .action((options: OutputOptions) =>
      withStore(options, async (store) => {
        const list = await new PlacementService(store).list();
        emit(options, list, () =>
          printTable(
            list.map((p) => ({ ...p })),
            ['id', 'enabled', 'description'],
          ),
        );
      }),
    );
  placements
    .command('add <id> <description>')
    .description('add a placement (id: a lower-case slug)')
    .option('--json', 'print JSON')
    .action((id: string, description: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const placement = await new PlacementService(store).add(id, description);
        emit(options, placement, () => console.log(`added placement ${placement.id}`));
      }),
    );
  placements
    .command('describe <id> <description>')
    .description("change a placement's description")
    .option('--json', 'print JSON')
    .action((id: string, description: string, options: OutputOptions) =>
      withStore(options, async (store) => {
        const placement = await new PlacementService(store).update(id, { description });
        emit(options, placement, () => console.log(`described placement ${placement.id}`));
      }),
    );
  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    placements
      .command(`${name} <id>`)
      .description(
        enabled ? 'serve a placement again' : 'stop serving a placement (fetch answers 400 within 2 s)',
      )
      .option('--json', 'print JSON')
      .action((id: string, options: OutputOptions) =>
        withStore(options, async (store) => {
          const placement = await new PlacementService(store).update(id, { enabled });
          emit(options, placement, () =>
            console.log(`placement ${placement.id} is ${enabled ? 'enabled' : 'disabled'}`),
          );
        }),
      );
  }

  program
    .command('audit')
    .description('list the latest entries of the audit log, oldest of them first (like tail)')
    .option('--type <type>', 'partner, api_key, admin_token, advertiser, campaign or placement')
    .option('--id <id>', 'one object')
    .option('--limit <n>', 'the latest this many entries', '200')
    .option('--json', 'print JSON')
    .action((options: OutputOptions & { type?: string; id?: string; limit: string }) =>
      withStore(options, async (store) => {
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
              action: e.action,
              reason: e.reason,
            })),
            ['id', 'at', 'actor', 'object', 'action', 'reason'],
          ),
        );
      }),
    );
}
