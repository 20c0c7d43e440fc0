// Who may open each page of the dashboard (D13, D14): one table, read by the gate every page
// passes (plugin.ts) and by the menu (layout.tsx), so a page is linked exactly where it opens.
import { mayChange, mayManageUsers, type AccountKind, type Role } from '../../../domain/accounts.js';

/** Who is asking: the kind of account they belong to and their role in it. */
export interface Viewer {
  kind: AccountKind;
  role: Role;
}

interface PageRule {
  allows: (viewer: Viewer) => boolean;
  /** What anyone else reads, with a 403: whose page it is (none for a page everyone opens). */
  refusal?: string;
}

const kinds =
  (...allowed: AccountKind[]) =>
  (viewer: Viewer): boolean =>
    allowed.includes(viewer.kind);
/** Reports and statements: everyone's, each of their own account's. */
const EVERYONE: PageRule = { allows: () => true };
/** Forms that change things: the account's admins and managers, never a reporter. */
const changing =
  (...allowed: AccountKind[]) =>
  (viewer: Viewer): boolean =>
    allowed.includes(viewer.kind) && mayChange(viewer.role);

const OPERATORS = 'the operator’s';

/**
 * Every signed-in page, by its route, as docs/dashboard.md gives them. A form posted from a page is
 * checked by the service it calls; the page itself answers 403 to anyone this table leaves out.
 */
export const PAGE_ACCESS: Readonly<Record<string, PageRule>> = {
  '/review': {
    allows: kinds('operator'),
    refusal: `the review queue is ${OPERATORS}: your campaigns are under Campaigns`,
  },
  '/campaigns': {
    allows: kinds('operator', 'advertiser'),
    refusal: 'campaigns are advertisers’ and the operator’s',
  },
  '/campaigns/:id': {
    allows: kinds('operator', 'advertiser'),
    refusal: 'campaigns are advertisers’ and the operator’s',
  },
  '/campaigns/new': {
    allows: changing('operator', 'advertiser'),
    refusal: 'new campaigns are made by the admins and managers of an advertiser or of the operator',
  },
  '/campaigns/:id/edit': {
    allows: changing('operator', 'advertiser'),
    refusal: 'campaigns are edited by the admins and managers of their advertiser or of the operator',
  },
  '/campaigns/:id/archive': {
    allows: changing('operator', 'advertiser'),
    refusal: 'campaigns are archived by the admins and managers of their advertiser or of the operator',
  },
  '/reports': EVERYONE,
  '/reports/figures': EVERYONE,
  '/reports.csv': EVERYONE,
  '/keys': { allows: kinds('operator', 'partner'), refusal: 'API keys are partners’ and the operator’s' },
  '/keys/:id/revoke': {
    allows: changing('operator', 'partner'),
    refusal: 'keys are revoked by the admins and managers of their partner or of the operator',
  },
  '/flags': {
    allows: kinds('operator', 'partner'),
    refusal: 'flags are about partners’ keys: the operator and each partner see them',
  },
  '/placements': {
    allows: kinds('operator', 'partner'),
    refusal: 'placements are for partners’ servers and the operator',
  },
  '/integration': {
    allows: kinds('partner'),
    refusal: "the integration page is a partner's: what its server needs to call Placard",
  },
  '/partners': { allows: kinds('operator'), refusal: `the partners are ${OPERATORS} to manage` },
  '/partners/:id/revenue-shares': {
    allows: kinds('operator', 'partner'),
    refusal: 'a partner’s revenue share is for the partner and the operator',
  },
  '/partners/:id/blocks': {
    allows: kinds('operator', 'partner'),
    refusal: 'what a partner blocks is for the partner and the operator',
  },
  // Statements (D18): each account's own, which the service narrows to it; the operator's forms.
  '/statements': EVERYONE,
  '/statements/:id': EVERYONE,
  '/statements/:id.csv': EVERYONE,
  '/statements/issue': {
    allows: changing('operator'),
    refusal: 'statements are issued by the admins and managers of the operator',
  },
  '/adjustments': { allows: kinds('operator'), refusal: `adjustments are ${OPERATORS} to record` },
  '/advertisers': { allows: kinds('operator'), refusal: `the advertisers are ${OPERATORS} to manage` },
  '/advertisers/:id/budget': {
    allows: kinds('operator', 'advertiser'),
    refusal: 'an advertiser’s budget is for the advertiser and the operator',
  },
  '/audit': { allows: kinds('operator'), refusal: 'only the operator may read the audit log' },
  '/money': { allows: kinds('operator'), refusal: `revenue, payouts and margin are ${OPERATORS}` },
  '/money/figures': { allows: kinds('operator'), refusal: `revenue, payouts and margin are ${OPERATORS}` },
  '/health': { allows: kinds('operator'), refusal: 'only the operator may see the service’s health' },
  // Webhooks (D19): every account's own endpoints; changes are the admins' and managers' (the service).
  '/webhooks': EVERYONE,
  '/webhooks/:id': EVERYONE,
  '/webhooks/:id/secret': {
    allows: changing('operator', 'advertiser', 'partner'),
    refusal: 'an endpoint’s secret is for its account’s admins and managers',
  },
  '/users': {
    allows: (viewer) => mayManageUsers(viewer.role),
    refusal: 'an account’s users and invitations are for its admins',
  },
};

/** Pages anyone may open, signed in or not: the start, sign-in, one-time links and static files. */
export const isPublicPage = (route: string): boolean =>
  ['/', '/sign-in', '/link/:secret'].includes(route) || route.startsWith('/assets/');

/** Whether the viewer may open the page at `route` (false for a route the table does not name). */
export const mayOpen = (route: string, viewer: Viewer): boolean =>
  PAGE_ACCESS[route]?.allows(viewer) ?? false;
