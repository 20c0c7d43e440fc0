import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { SignedIn } from '../../services/sessions.js';
import type { DashboardDeps } from './context.js';
import type { Refused } from './pages/layout.js';
import { sendPage } from './render.js';
import { attempt, formFields, PAGE, requireSignedIn } from './support.js';

/** Renders a page for the signed-in person; `refused` is a form of it the service just refused. */
export type RenderPage = (
  request: FastifyRequest,
  reply: FastifyReply,
  signedIn: SignedIn,
  refused?: Refused,
) => Promise<VNode>;

/** What a form does: calls a service as the signed-in person with the form's fields. */
export type Change = (
  signedIn: SignedIn,
  fields: Record<string, string>,
  params: Record<string, string>,
) => Promise<unknown>;

/** The form just posted, refused with `problem`: where it was posted and its fields as typed. */
export function refusal(request: FastifyRequest, problem: string): Refused {
  return { action: request.url.split('?')[0]!, problem, fields: formFields(request) };
}

/**
 * A page at `path` for people signed in, and a way to add the forms on it. Each form posts to its
 * own path and runs its change through a service; done, the browser goes back to the page (303,
 * so a reload does not post again); refused, the page comes again with the service's message and
 * the fields as typed, and the status the refusal deserves.
 */
export function pageWithForms(
  app: FastifyInstance,
  deps: DashboardDeps,
  path: string,
  render: RenderPage,
): (action: string, change: Change) => void {
  app.get(path, PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await render(request, reply, signedIn));
  });
  return (action, change) => {
    app.post(action, PAGE, async (request, reply) => {
      const signedIn = requireSignedIn(request, reply)!;
      const refused = await attempt(
        reply,
        async () => {
          await change(signedIn, formFields(request), request.params as Record<string, string>);
        },
        (problem) => render(request, reply, signedIn, refusal(request, problem)),
      );
      if (refused) return reply;
      deps.afterChange();
      return reply.redirect(path, 303);
    });
  };
}

/** The id a long list continues from, from the query (`?after=`, `?before=`); anything else, none. */
export function continuesFrom(request: FastifyRequest, name: string): number | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** Of `size + 1` rows asked for, the `size` to show, and the last one's id when more follow. */
export function onePage<T extends { id: number }>(rows: T[], size: number): { rows: T[]; next?: number } {
  const shown = rows.slice(0, size);
  return rows.length > size ? { rows: shown, next: shown.at(-1)!.id } : { rows: shown };
}

/** The numeric id in the path (`/keys/:id/…`); anything but digits names nothing (id 0). */
export function idParam(params: Record<string, string>): number {
  const id = params['id'] ?? '';
  return /^\d{1,15}$/.test(id) ? Number(id) : 0;
}
