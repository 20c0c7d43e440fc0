import type { Command } from 'commander';
import { isoTimes } from '../../services/iso-times.js';
import { AdminTokens, adminTokenView } from '../../services/admin-tokens.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { accountIds, accountName, namesOf } from '../../services/names.js';
import { storedAccount } from '../../services/scope.js';
import type { AdminTokenRecord } from '../../store/store.js';
import { idAction, storeAction } from '../context.js';
import { emit, printTable, type OutputOptions, type Row } from '../output.js';

const tokenJson = (token: AdminTokenRecord) => isoTimes(adminTokenView(token, Date.now())) as Row;

type CreateOptions = OutputOptions & {
  label: string;
  expiresInHours?: string;
  account?: string;
  role?: string;
};

/** `create` under `tokens`, and the older `admin-token` that scripts may still call. */
function createCommand(command: Command): void {
  storeAction(
    command
      .option('--label <label>', 'who or what it is for', 'cli')
      .option('--expires-in-hours <hours>', 'stop working after this many hours (default: never)')
      .option(
        '--account <account>',
        'act for advertiser:<id or name> or partner:<id or name> only (default: operator)',
      )
      .option('--role <role>', 'admin, manager or reporter in that account (default: admin)'),
    async ({ store }, options: CreateOptions) => {
      const { token, plaintext } = await new AdminTokens(store).create({
        label: options.label,
        ...(options.expiresInHours !== undefined && { expiresInHours: Number(options.expiresInHours) }),
        ...(options.account !== undefined && { account: options.account }),
        ...(options.role !== undefined && { role: options.role }),
      });
      emit(options, { ...tokenJson(token), token: plaintext }, () => {
        console.log(`created admin token ${token.id}. Store it now; it is not shown again:`);
        console.log(plaintext);
      });
    },
  );
}

/** Admin tokens for the management API: create, list, revoke (audited as `cli`). */
export function registerTokens(program: Command): void {
  const tokens = program.command('tokens').description('admin tokens for the management API');
  createCommand(tokens.command('create').description('create an admin token (printed once)'));
  createCommand(program.command('admin-token', { hidden: true }).description('same as tokens create'));
  storeAction(
    tokens
      .command('list')
      .description('list admin tokens (prefix, status, last use and expiry; never the token)'),
    async ({ store }, options: OutputOptions) => {
      const found = await new AdminTokens(store).list();
      const list = found.map(tokenJson);
      const accounts = found.map((token) => storedAccount(token.scope));
      const names = await namesOf(store, CLI_ACTOR, accountIds(accounts));
      emit(options, list, () =>
        printTable(
          list.map((token, i) => ({ ...token, accountName: accountName(accounts[i]!, names) })),
          [
            'id',
            'label',
            'prefix',
            'account',
            'accountName',
            'role',
            'status',
            'createdAt',
            'lastUsedAt',
            'expiresAt',
          ],
        ),
      );
    },
  );
  idAction('token id', tokenJson)(
    tokens
      .command('revoke <id>')
      .description('revoke an admin token at once (the last active one cannot be)'),
    (store, id) => new AdminTokens(store).revoke(id),
    (token) => `revoked admin token ${token.id} (${token.displayPrefix}…)`,
  );
}
