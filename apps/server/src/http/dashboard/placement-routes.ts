import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { pageAsked, pagingOf } from './paging.js';
import { pageWithForms, type RenderPage } from './page-routes.js';
import { PlacementsPage } from './pages/placements.js';
import { pageContext } from './support.js';

/**
 * The placement registry (D1): the operator adds, describes, enables and disables placements;
 * partners read the enabled ones, the placements they may ask for.
 */
export async function placementRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const placements = (signedIn: SignedIn) => deps.services.placements(signedIn.actor);

  const placementsPage: RenderPage = async (request, reply, signedIn, refused) => {
    const operator = signedIn.user.account.kind === 'operator';
    const asked = pageAsked(request);
    const found = await placements(signedIn).page(asked);
    return PlacementsPage({
      page: pageContext(request, reply),
      placements: found.rows,
      paging: pagingOf(request, '/placements', asked, found),
      operator,
      canChange: operator && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, '/placements', placementsPage);
  form('/placements', (signedIn, fields) => placements(signedIn).add(fields['id'], fields['description']));
  form('/placements/:id', (signedIn, fields, params) =>
    placements(signedIn).update(params['id'] ?? '', { description: fields['description'] ?? '' }),
  );
  form('/placements/:id/enable', (signedIn, _fields, params) =>
    placements(signedIn).update(params['id'] ?? '', { enabled: true }),
  );
  form('/placements/:id/disable', (signedIn, _fields, params) =>
    placements(signedIn).update(params['id'] ?? '', { enabled: false }),
  );
}
