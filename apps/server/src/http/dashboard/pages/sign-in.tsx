import type { FieldProblem } from '../../../domain/errors.js';
import { FieldMessage, invalidAttributes, ProblemSummary, wordProblems } from './form-problems.js';
import { HTTPS_NEEDED } from '../plain-http.js';
import { CsrfField, Layout, Problem, type PageContext } from './layout.js';

export function SignInPage(props: {
  page: PageContext;
  email?: string;
  problem?: string;
  next?: string;
  /** Opened over plain HTTP away from localhost, where browsers refuse the dashboard's cookies. */
  httpsNeeded?: boolean;
}) {
  return (
    <Layout title="Sign in" page={props.page}>
      {props.httpsNeeded && <p class="problem">{HTTPS_NEEDED}</p>}
      <Problem message={props.problem} />
      <form method="post" action="/sign-in" class="stack">
        <CsrfField token={props.page.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <label for="email">E-mail address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={props.email ?? ''}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">
        No account yet, or forgot your password? Ask an admin of your account for a one-time link.
      </p>
    </Layout>
  );
}

/** Setting a password through an invitation or a reset link. */
export function SetPasswordPage(props: {
  page: PageContext;
  email: string;
  purpose: 'invitation' | 'reset';
  action: string;
  problem?: string;
  /** The problem with the password, by field, as the service found it. */
  problems?: readonly FieldProblem[];
}) {
  const title = props.purpose === 'invitation' ? 'Welcome to Placard' : 'Choose a new password';
  const worded =
    props.problem === undefined
      ? undefined
      : wordProblems(props.problem, props.problems, { password: 'New password' });
  const problem = worded?.fields.get('password');
  return (
    <Layout title={title} page={props.page}>
      <p>
        Choose a password for <strong>{props.email}</strong>: at least 12 characters, not a commonly used one.
      </p>
      <ProblemSummary worded={worded} idOf={(name) => name} />
      <form method="post" action={props.action} class="stack">
        <CsrfField token={props.page.csrf} />
        <input type="email" name="username" autocomplete="username" value={props.email} hidden readonly />
        <label for="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          {...invalidAttributes('password', problem)}
        />
        <FieldMessage fieldId="password" message={problem} />
        <button type="submit">Set password and sign in</button>
      </form>
    </Layout>
  );
}
