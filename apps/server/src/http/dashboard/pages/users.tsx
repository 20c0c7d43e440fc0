import { ROLES } from '../../../domain/accounts.js';
import type { OneTimeLink, userView } from '../../../services/users.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';
import { DataTable, SecretField } from './parts.js';
import { when } from './format.js';

type UserRow = ReturnType<typeof userView>;

export function UsersPage(props: {
  page: PageContext;
  users: UserRow[];
  operator: boolean;
  problem?: string;
}) {
  const { page } = props;
  return (
    <Layout title="Users" page={page} current="/users">
      <Problem message={props.problem} />
      <form method="post" action="/users" class="inline">
        <CsrfField token={page.csrf} />
        <label for="email">E-mail address</label>
        <input id="email" name="email" type="email" required />
        <label for="role">Role</label>
        <select id="role" name="role">
          {ROLES.map((role) => (
            <option value={role} key={role}>
              {role}
            </option>
          ))}
        </select>
        {props.operator && (
          <>
            <label for="account">Account</label>
            <input
              id="account"
              name="account"
              value="operator"
              placeholder="operator, advertiser:Acme, partner:7"
            />
          </>
        )}
        <button type="submit">Invite</button>
      </form>
      <p class="hint">
        admin: everything the account may do, its users included; manager: everything but users; reporter:
        read only.
      </p>
      <DataTable
        label="Users"
        count={props.users.length}
        noun={['One user', 'users']}
        empty="No users yet: invite the first one above."
        headers={['E-mail', props.operator && 'Account', 'Role', 'Status', 'Since']}
      >
        {props.users.map((user) => (
          <tr key={user.id}>
            <td>{user.email}</td>
            {props.operator && <td>{user.account}</td>}
            <td>{user.role}</td>
            <td>{user.status}</td>
            <td>{when(user.createdAt)}</td>
          </tr>
        ))}
      </DataTable>
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
