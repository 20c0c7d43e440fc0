import type { Command } from 'commander';
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

/** Advertisers, placements and the audit log. */
export function registerRegistry(program: Command): void {
  const advertisers = program.command('advertisers').description('the accounts campaigns belong to');
  advertiserAction(
    advertisers.command('create <name>').description('create an advertiser'),
    (store, _options, name) => new AdvertiserService(store).create(name),
    (advertiser) => `created advertiser ${advertiser.id} "${advertiser.name}"`,
  );
  storeAction(
    advertisers.command('list').description('list advertisers'),
    async ({ store }, options: OutputOptions) => {
      const list = (await new AdvertiserService(store).list({ limit: 1_000_000 })).map(
        (a) => isoTimes(a) as Row,
      );
      emit(options, list, () => printTable(list, ['id', 'name', 'createdAt']));
    },
  );
  advertiserAction(
    advertisers.command('rename <id> <name>').description('rename an advertiser'),
    (store, _options, id, name) =>
      new AdvertiserService(store).rename(positiveInteger(id, 'advertiser id'), name),
    (advertiser) => `renamed advertiser ${advertiser.id} to "${advertiser.name}"`,
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
