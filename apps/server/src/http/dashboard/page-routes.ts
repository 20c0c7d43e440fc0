import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { FieldProblem } from '../../domain/errors.js';
import type { SignedIn } from '../../services/sessions.js';
import { setFlash } from './cookies.js';
import { idOf } from './ids.js';
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
export type Change<T = unknown> = (
  signedIn: SignedIn,
  fields: Record<string, string>,
  params: Record<string, string>,
) => Promise<T>;

/**
 * The form just posted, refused with `problem` (and `problems`, by field): where it was posted and
 * its fields as typed.
 */
export function refusal(
  request: FastifyRequest,
  problem: string,
  problems: readonly FieldProblem[] = [],
): Refused {
  return { action: request.url.split('?')[0]!, problem, fields: formFields(request), problems };
}

/**
 * A page at `path` for people signed in, and a way to add the forms on it. Each form posts to its
 * own path and runs its change through a service; done, the browser goes back to the page (303,
 * so a reload does not post again), which says what was done when the form gives `done`; refused,
 * the page comes again with the service's message and the fields as typed, and the status the
 * refusal deserves.
 */
export function pageWithForms(
  app: FastifyInstance,
  path: string,
  render: RenderPage,
): <T>(action: string, change: Change<T>, done?: (result: T) => string) => void {
  app.get(path, PAGE, async (request, reply) => {
    const signedIn = requireSignedIn(request, reply);
    if (!signedIn) return reply;
    return sendPage(reply, await render(request, reply, signedIn));
  });
  return (action, change, done) => {
    app.post(action, PAGE, async (request, reply) => {
      const signedIn = requireSignedIn(request, reply)!;
      const refused = await attempt(
        reply,
        async () => {
          const result = await change(
            signedIn,
            formFields(request),
            request.params as Record<string, string>,
          );
          if (done) setFlash(reply, done(result));
        },
        (problem, problems) => render(request, reply, signedIn, refusal(request, problem, problems)),
      );
      if (refused) return reply;
      return reply.redirect(path, 303);
    });
  };
}

/** The numeric id in the path (`/keys/:id/…`) of a `noun`; anything else is a 404 that names it (`ids.ts`). */
export function idParam(params: Record<string, string>, noun: string): number {
  return idOf(params['id'], noun);
}
