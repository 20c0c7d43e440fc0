import type { ComponentChildren } from 'preact';
import type { FieldProblem } from '../../../domain/errors.js';
import type { SignedIn } from '../../../services/sessions.js';
import { mayOpen, type Viewer } from './access.js';

/** Every page has the CSRF token its forms carry and, once signed in, who is signed in. */
export interface PageContext {
  csrf: string;
  signedIn: SignedIn | null;
  /** What the person just did, said once on the page they come to next ("Key plc_ab… revoked…"). */
  flash?: string;
}

/** Who is signed in, as the table of who may open each page reads them. */
export const viewerOf = (signedIn: SignedIn): Viewer => ({
  kind: signedIn.user.account.kind,
  role: signedIn.user.role,
});

/**
 * The menu, in order: each person sees the pages they may open (pages/access.ts), so an operator
 * sees every one of them but Integration, an advertiser Campaigns, Reports, Statements and its
 * Budget, a partner its keys, flags, placements, integration, reports, statements and Blocks; everyone
 * Webhooks; admins also Users. A page of one advertiser or partner (`:id`) is linked for its own people, to their own.
 */
const MENU: ReadonlyArray<[string, string]> = [
  ['/review', 'Review queue'],
  ['/campaigns', 'Campaigns'],
  ['/keys', 'API keys'],
  ['/flags', 'Flags'],
  ['/placements', 'Placements'],
  ['/integration', 'Integration'],
  ['/reports', 'Reports'],
  ['/money', 'Money'],
  ['/statements', 'Statements'],
  ['/advertisers/:id/budget', 'Budget'],
  ['/partners/:id/blocks', 'Blocks'],
  ['/adjustments', 'Adjustments'],
  ['/partners', 'Partners'],
  ['/advertisers', 'Advertisers'],
  ['/audit', 'Audit log'],
  ['/health', 'Health'],
  ['/webhooks', 'Webhooks'],
  ['/users', 'Users'],
];

/** The person's menu: the pages they may open, a page of one advertiser or partner for its own people only. */
function sections(signedIn: SignedIn): Array<[string, string]> {
  const { account } = signedIn.user;
  const own = (route: string) => account.kind !== 'operator' && route.startsWith(`/${account.kind}s/`);
  return MENU.filter(
    ([route]) => mayOpen(route, viewerOf(signedIn)) && (!route.includes(':id') || own(route)),
  ).map(([route, label]) => [
    account.kind === 'operator' ? route : route.replace(':id', String(account.id)),
    label,
  ]);
}

/** The hidden field that carries the CSRF token in every form. */
export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

/**
 * A form the service refused: where it was posted, the service's message, the fields as typed and
 * the problems the service found with each field (`pages/form-problems.tsx` words them).
 */
export interface Refused {
  action: string;
  problem: string;
  fields: Record<string, string>;
  problems?: readonly FieldProblem[];
}

/** A problem to show above a form: the service's own message, in words. */
export function Problem({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="problem" role="alert">
      {message}
    </p>
  );
}

export function Layout(props: {
  title: string;
  page: PageContext;
  current?: string;
  /** Scripts the page needs (served by Placard, loaded after the page is parsed). */
  scripts?: string[];
  /** Stylesheets the page needs beyond the dashboard's own. */
  styles?: string[];
  children: ComponentChildren;
}) {
  const { signedIn, csrf } = props.page;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Placard`}</title>
        {/* No icon: otherwise every browser asks for /favicon.ico and logs its 404. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/assets/dashboard.css" />
        {props.styles?.map((href) => (
          <link key={href} rel="stylesheet" href={href} />
        ))}
        {props.scripts?.map((src) => (
          <script key={src} src={src} defer />
        ))}
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/">
            Placard
          </a>
          {signedIn && (
            <nav aria-label="Sections">
              <ul>
                {sections(signedIn).map(([href, label]) => (
                  <li key={href}>
                    <a href={href} aria-current={props.current === href ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {signedIn && (
            <form method="post" action="/sign-out" class="who">
              <CsrfField token={csrf} />
              <span>
                {signedIn.user.email} · {signedIn.accountName} · {signedIn.user.role}
              </span>
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.page.flash && (
            <p class="flash" role="status">
              {props.page.flash}
            </p>
          )}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A page for a failure: the message a person can act on, and a way back. */
export function ErrorPage(props: { page: PageContext; title: string; message: string }) {
  return (
    <Layout title={props.title} page={props.page}>
      <Problem message={props.message} />
      <p>
        <a href="/">Back to the dashboard</a>
      </p>
    </Layout>
  );
}
