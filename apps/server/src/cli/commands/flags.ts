import type { Command } from 'commander';
import { KEY_SIGNALS } from '../../domain/key-flags.js';
import { isoTimes } from '../../services/iso-times.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { flagView, KeyFlagService } from '../../services/key-flags.js';
import { namesOf } from '../../services/names.js';
import type { KeyFlagRecord } from '../../store/store.js';
import { idAction, positiveInteger, storeAction } from '../context.js';
import { emit, iso, printTable, type OutputOptions } from '../output.js';

const flagJson = (flag: KeyFlagRecord) => isoTimes(flagView(flag)) as ReturnType<typeof flagView>;
/** A command on one flag by its id, printing the flag it answers. */
const flagAction = idAction('flag id', flagJson);

/** Key flags (D15): list, show, dismiss, suspend the key, and the automatic suspension policy. */
export function registerFlags(program: Command): void {
  const flags = program
    .command('flags')
    .description('keys whose traffic looks fraudulent or broken (D15), and their review');
  storeAction(
    flags
      .command('list')
      .description('list flags, newest first')
      .option('--status <status>', 'open, dismissed or suspended')
      .option('--limit <n>', 'at most this many', '200'),
    async ({ store }, options: OutputOptions & { status?: string; limit: string }) => {
      const list = await new KeyFlagService(store).list(
        { status: options.status },
        { limit: positiveInteger(options.limit, 'limit') },
      );
      const names = await namesOf(store, CLI_ACTOR, { partner: list.map((flag) => flag.partnerId) });
      const labels = new Map<number, string | null>();
      for (const id of new Set(list.map((flag) => flag.apiKeyId)))
        labels.set(id, (await store.getApiKey(id))?.label ?? null);
      emit(options, list.map(flagJson), () =>
        printTable(
          list.map((flag) => ({
            id: flag.id,
            key: flag.apiKeyId,
            keyLabel: labels.get(flag.apiKeyId),
            partner: flag.partnerId,
            partnerName: names.partner.get(flag.partnerId),
            signal: flag.signal,
            status: flag.status,
            updatedAt: iso(flag.updatedAt),
            summary: flagView(flag).summary,
          })),
          ['id', 'key', 'keyLabel', 'partner', 'partnerName', 'signal', 'status', 'updatedAt', 'summary'],
        ),
      );
    },
  );
  storeAction(
    flags.command('show <id>').description('one flag with its evidence'),
    async ({ store }, options: OutputOptions, id: string) => {
      const flag = flagJson(await new KeyFlagService(store).get(positiveInteger(id, 'flag id')));
      emit(options, flag, () => {
        console.log(
          `flag ${flag.id}: ${flag.signal}, ${flag.status}, key ${flag.apiKeyId} of partner ${flag.partnerId}`,
        );
        console.log(flag.summary);
        for (const [name, value] of Object.entries(flag.evidence))
          if (name !== 'summary') console.log(`  ${name}: ${JSON.stringify(value)}`);
        if (flag.reviewedBy !== null) console.log(`reviewed by ${flag.reviewedBy}: ${flag.reviewNote ?? ''}`);
      });
    },
  );
  flagAction(
    flags
      .command('dismiss <id>')
      .description('close a flag as reviewed and fine (the key is not flagged for that signal for 24 hours)')
      .requiredOption('--note <text>', 'why, for the audit log'),
    (store, id, options: { note: string }) => new KeyFlagService(store).dismiss(id, options.note),
    (flag) => `dismissed flag ${flag.id}`,
  );
  flagAction(
    flags
      .command('suspend <id>')
      .description('suspend the flagged key (it gets 403 within 2 s) and close the flag')
      .option('--reason <text>', 'the reason the partner reads (default: the evidence)'),
    (store, id, options: { reason?: string }) => new KeyFlagService(store).suspend(id, options.reason),
    (flag) => `suspended key ${flag.apiKeyId} (flag ${flag.id})`,
  );
  storeAction(
    flags
      .command('policy')
      .description('show or change the automatic suspension policy (off unless turned on)')
      .option('--auto-suspend <on|off>', 'suspend flagged keys without waiting for a review')
      .option('--signals <list>', `comma-separated: ${KEY_SIGNALS.join(', ')}`)
      .option('--multiplier <n>', 'suspend only at this many times a signal’s threshold (1 to 100)'),
    async (
      { store },
      options: OutputOptions & { autoSuspend?: string; signals?: string; multiplier?: string },
    ) => {
      const service = new KeyFlagService(store);
      const changes: Record<string, unknown> = {};
      if (options.autoSuspend !== undefined) {
        if (!['on', 'off'].includes(options.autoSuspend))
          throw new Error(`--auto-suspend must be on or off (got "${options.autoSuspend}")`);
        changes['autoSuspend'] = options.autoSuspend === 'on';
      }
      if (options.signals !== undefined)
        changes['signals'] = options.signals
          .split(',')
          .map((signal) => signal.trim())
          .filter(Boolean);
      if (options.multiplier !== undefined) changes['multiplier'] = Number(options.multiplier);
      const policy =
        Object.keys(changes).length > 0 ? await service.setPolicy(changes) : await service.policy();
      emit(options, policy, () =>
        console.log(
          policy.autoSuspend
            ? `automatic suspension is on: ${policy.signals.join(', ')}, at ${policy.multiplier}× their thresholds`
            : 'automatic suspension is off: flags wait for an operator',
        ),
      );
    },
  );
}
