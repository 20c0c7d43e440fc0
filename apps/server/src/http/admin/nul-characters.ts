import type { FastifyRequest } from 'fastify';
import { invalidFields } from '../../domain/errors.js';
import { NUL_PROBLEM, nulFields } from '../../domain/nul-characters.js';

/** 400 naming every field, query or path parameter of the request that holds a NUL character. */
export function refuseNulCharacters(request: FastifyRequest): void {
  const fields = [request.params, request.query, request.body].flatMap((part) => nulFields(part));
  if (fields.length > 0) throw invalidFields(fields.map((field) => ({ field, message: NUL_PROBLEM })));
}
