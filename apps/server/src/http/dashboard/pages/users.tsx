import { ROLES } from '../../../domain/accounts.js';
import type { OneTimeLink, userView } from '../../../services/users.js';
import { FieldMessage, invalidAttributes, ProblemSummary, wordProblems } from './form-problems.js';
import { CsrfField, Layout, type PageContext, type Refused } from './layout.js';
import { ListTable, SecretField, typed, type Paging } from './parts.js';
import { when } from './format.js';

/** A user as listed, with the name of their account (its advertiser's or partner's) when known. */
type UserRow = ReturnType<typeof userView> & { accountName: string | undefined };

/** An account by its name, its label (`advertiser:3`) beside it: the name to read, the label to type. */
function Account({ user }: { user: UserRow }) {
  if (user.accountName === undefined || user.account === 'operator') return <>{user.account}</>;
  return (
    <>
      {user.accountName} <span class="note">{user.account}</span>
    </>
  );
}

const INVITATION_LABELS = { email: 'E-mail address', role: 'Role', account: 'Account' } as const;

export function UsersPage(props: {
  page: PageContext;
  users: UserRow[];
  paging: Paging;
  operator: boolean;
  /** The invitation form, refused: kept as typed, with what is wrong beside each field. */
  refused?: Refused;
}) {
  const { page, refused } = props;
  const worded = refused && wordProblems(refused.problem, refused.problems, INVITATION_LABELS);
  const value = (name: string, otherwise: string) => typed(refused, '/users', name, otherwise);
  const role = value('role', 'admin');
  const problem = (name: string) => worded?.fields.get(name);
  return (
    <Layout title="Users" page={page} current="/users">
      <ProblemSummary worded={worded} idOf={(name) => name} />
      <form method="post" action="/users" class="inline">
        <CsrfField token={page.csrf} />
        <span class="field">
          <label for="email">{INVITATION_LABELS.email}</label>
          <input
            id="email"
            name="email"
            type="email"
            required
            value={value('email', '')}
            {...invalidAttributes('email', problem('email'))}
          />
          <FieldMessage fieldId="email" message={problem('email')} />
        </span>
        <span class="field">
          <label for="role">{INVITATION_LABELS.role}</label>
          <select id="role" name="role" {...invalidAttributes('role', problem('role'))}>
            {ROLES.map((choice) => (
              <option value={choice} key={choice} selected={choice === role}>
                {choice}
              </option>
            ))}
          </select>
          <FieldMessage fieldId="role" message={problem('role')} />
        </span>
        {props.operator && (
          <span class="field">
            <label for="account">{INVITATION_LABELS.account}</label>
            <input
              id="account"
              name="account"
              value={value('account', 'operator')}
              placeholder="operator, advertiser:Acme, partner:7"
              {...invalidAttributes('account', problem('account'))}
            />
            <FieldMessage fieldId="account" message={problem('account')} />
          </span>
        )}
        <button type="submit">Invite</button>
      </form>
      <p class="hint">
        admin: everything the account may do, its users included; manager: everything but users; reporter:
        read only.
      </p>
      <ListTable
        noun={['One user', 'users']}
        rows={props.users}
        paging={props.paging}
        empty="No users yet: invite the first one above."
        columns={[
          { header: 'E-mail', cell: (user) => user.email },
          props.operator && { header: 'Account', cell: (user) => <Account user={user} /> },
          { header: 'Role', cell: (user) => user.role },
          { header: 'Status', cell: (user) => user.status },
          { header: 'Since', cell: (user) => when(user.createdAt) },
        ]}
      />
    </Layout>
  );
}

/** An invitation link, shown once: the store keeps only its digest. */
export function InvitationPage(props: { page: PageContext; email: string; link: OneTimeLink }) {
  return (
    <Layout title="Invitation ready" page={props.page} current="/users">
      <p>
        Send this link to <strong>{props.email}</strong>. It works once, until {when(props.link.expiresAt)},
        and is not shown again.
      </p>
      <SecretField id="link" label="Invitation link" value={props.link.url} />
      <p>
        <a href="/users">Back to the users</a>
      </p>
    </Layout>
  );
}
