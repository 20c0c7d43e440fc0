import type { FastifyRequest } from 'fastify';
import { invalidFields } from '../domain/errors.js';
import { NUL_PROBLEM, nulFields } from '../domain/nul-characters.js';

/**
 * 400 naming every field, query or path parameter of the request that holds a NUL character: the
 * management API's and the dashboard's one check (a sign-in form included), run before any handler
 * reaches the store, so both engines answer the same.
 */
export function refuseNulCharacters(request: FastifyRequest): void {
  const fields = [request.params, request.query, request.body].flatMap((part) => nulFields(part));
  if (fields.length > 0) throw invalidFields(fields.map((field) => ({ field, message: NUL_PROBLEM })));
}
