import type { FastifyInstance } from 'fastify';
import { mayChange } from '../../domain/accounts.js';
import { PlacementService } from '../../services/placements.js';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import { pageWithForms, type RenderPage } from './page-routes.js';
import { PlacementsPage } from './pages/placements.js';
import { pageContext } from './support.js';

/**
 * The placement registry (D1): the operator adds, describes, enables and disables placements;
 * partners read the enabled ones, the placements they may ask for.
 */
export async function placementRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const placements = (signedIn: SignedIn) => new PlacementService(deps.store, signedIn.actor, deps.clock);

  const placementsPage: RenderPage = async (request, reply, signedIn, refused) => {
    const operator = signedIn.user.account.kind === 'operator';
    const all = await placements(signedIn).list();
    return PlacementsPage({
      page: pageContext(request, reply),
      placements: operator ? all : all.filter((placement) => placement.enabled),
      operator,
      canChange: operator && mayChange(signedIn.user.role),
      refused,
    });
  };

  const form = pageWithForms(app, deps, '/placements', placementsPage);
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
