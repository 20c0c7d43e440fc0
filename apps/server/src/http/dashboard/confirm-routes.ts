import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import { allowedActions } from '../../domain/lifecycle.js';
import type { DashboardDeps } from './context.js';
import { ConfirmPage } from './pages/confirm.js';
import { sendPage } from './render.js';
import { idOrNotFound } from './ids.js';
import { PAGE, pageContext, requireSignedIn } from './support.js';

/**
 * The pages that ask before what cannot be undone: archiving a campaign and revoking a key. Each
 * says what will happen and posts to the action the list's button used to post to; the services
 * decide again whether the change is allowed.
 */
export async function confirmRoutes(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get('/campaigns/:id/archive', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const id = idOrNotFound(request, 'campaign');
    const campaign = await deps.services.campaigns(signedIn.actor).get(id);
    if (!allowedActions(campaign.status).includes('archive'))
      throw new DomainError(
        'conflict',
        `campaign “${campaign.title}” is ${campaign.status} and cannot be archived`,
      );
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      ConfirmPage({
        page,
        title: `Archive “${campaign.title}”?`,
        current: '/campaigns',
        consequences: [
          'It stops serving at once and for good: an archived campaign cannot be resumed, edited or submitted again.',
          'Its reports stay. To serve it again, create a new campaign.',
        ],
        action: `/campaigns/${campaign.id}/archive`,
        button: 'Archive for good',
        back: { href: '/campaigns', text: 'Keep it: back to the campaigns' },
      }),
    );
  });

  app.get('/keys/:id/revoke', PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    const id = idOrNotFound(request, 'api key');
    const key = await deps.services.partners(signedIn.actor).getKey(id);
    if (key.status === 'revoked')
      throw new DomainError('conflict', `api key ${key.displayPrefix}… is already revoked`);
    const page = pageContext(request, reply);
    return sendPage(
      reply,
      ConfirmPage({
        page,
        title: `Revoke key ${key.displayPrefix}…?`,
        current: '/keys',
        consequences: [
          `Every request with key ${key.displayPrefix}… is refused (401) within 2 seconds, and it cannot be turned back on.`,
          'Deploy another key on your servers first: create one, or rotate this key instead, which keeps it working for 24 hours.',
        ],
        action: `/keys/${key.id}/revoke`,
        button: 'Revoke for good',
        back: { href: '/keys', text: 'Keep it: back to the keys' },
      }),
    );
  });
}
