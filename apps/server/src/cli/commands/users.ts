import type { Command } from 'commander';
import { isoTimes } from '../../services/iso-times.js';
import { CLI_ACTOR } from '../../services/audit.js';
import { accountIds, accountName, namesOf } from '../../services/names.js';
import { UserService, userView, type OneTimeLink } from '../../services/users.js';
import type { UserRecord } from '../../store/store.js';
import { storeAction } from '../context.js';
import { emit, printTable, type OutputOptions, type Row } from '../output.js';

const userJson = (user: UserRecord) => isoTimes(userView(user)) as Row;
const linkJson = (link: OneTimeLink) => isoTimes({ link: link.url, expiresAt: link.expiresAt }) as Row;

/** Prints a one-time link, which is shown once: the store keeps only its digest. */
function printLink(what: string, link: OneTimeLink): void {
  console.log(
    `${what}. Pass this one-time link on; it works once, until ${new Date(link.expiresAt).toISOString()}:`,
  );
  console.log(link.url);
}

type CreateOptions = OutputOptions & { email: string; account: string; role: string };

/** People who sign in to the dashboard (D13): create with an invitation link, list, invite, reset, disable. */
export function registerUsers(program: Command): void {
  const users = program.command('users').description('people who sign in to the dashboard');
  const service = (store: ConstructorParameters<typeof UserService>[0], publicUrl: string) =>
    new UserService(store, undefined, publicUrl);
  storeAction(
    users
      .command('create')
      .description('create a user and print their one-time invitation link')
      .requiredOption('--email <address>', 'their e-mail address (what they sign in with)')
      .option('--account <account>', 'operator, advertiser:<id or name> or partner:<id or name>', 'operator')
      .option(
        '--role <role>',
        'admin (everything, users included), manager (all but users) or reporter (read only)',
        'admin',
      ),
    async ({ store, config }, options: CreateOptions) => {
      const { user, link } = await service(store, config.publicUrl).create(options);
      emit(options, { ...userJson(user), ...linkJson(link) }, () =>
        printLink(`created user ${user.email} (${userView(user).account}, ${user.role})`, link),
      );
    },
  );
  storeAction(
    users
      .command('list')
      .description('list users (never their passwords)')
      .option(
        '--account <account>',
        'only this account: operator, advertiser:<id or name> or partner:<id or name>',
      ),
    async ({ store, config }, options: OutputOptions & { account?: string }) => {
      const found = await service(store, config.publicUrl).list(options.account);
      const list = found.map(userJson);
      const names = await namesOf(store, CLI_ACTOR, accountIds(found.map((user) => user.account)));
      emit(options, list, () =>
        printTable(
          list.map((user, i) => ({ ...user, accountName: accountName(found[i]!.account, names) })),
          ['id', 'email', 'account', 'accountName', 'role', 'status', 'createdAt'],
        ),
      );
    },
  );
  for (const [name, description, what] of [
    ['invite', 'a new invitation link for a user who has not set a password yet', 'new invitation'],
    ['reset', "a password-reset link; using it ends the user's sessions", 'password reset'],
  ] as const) {
    storeAction(
      users.command(`${name} <user>`).description(`${description} (<user>: id or e-mail address)`),
      async ({ store, config }, options: OutputOptions, ref: string) => {
        const users = service(store, config.publicUrl);
        const link = name === 'invite' ? await users.invite(ref) : await users.reset(ref);
        emit(options, linkJson(link), () => printLink(`${what} for ${ref}`, link));
      },
    );
  }
  storeAction(
    users
      .command('disable <user>')
      .description('stop a user from signing in and end their sessions (<user>: id or e-mail address)'),
    async ({ store, config }, options: OutputOptions, ref: string) => {
      const user = await service(store, config.publicUrl).disable(ref);
      emit(options, userJson(user), () => console.log(`disabled user ${user.email}; their sessions ended`));
    },
  );
}
