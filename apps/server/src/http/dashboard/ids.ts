import type { FastifyRequest } from 'fastify';
import { notFound } from '../../domain/errors.js';
import { idFromText } from '../../domain/ids.js';

/**
 * The id written in a dashboard path (`/campaigns/12`). Anything that cannot be a stored id (`abc`,
 * `1.5`, a number past any stored one) names nothing, and the 404 says what was asked for rather
 * than a number the person never typed.
 */
export function idOf(text: string | undefined, noun: string): number {
  const id = idFromText(text ?? '');
  if (id === undefined)
    throw notFound(`there is no ${noun} “${text ?? ''}”: a ${noun} is named by its number, such as 12`);
  return id;
}

/** The `:id` of the request's path, as `idOf` reads it. */
export const idOrNotFound = (request: FastifyRequest, noun: string): number =>
  idOf((request.params as { id?: string }).id, noun);
