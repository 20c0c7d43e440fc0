import type { FastifyRequest } from 'fastify';
import { invalidFields } from '../../domain/errors.js';

/**
 * The paths of the strings in `value` (a body, a query or path parameters) that hold U+0000. SQLite
 * would store it and PostgreSQL refuses it with an error, so it is refused here, the same on both.
 */
export function nulFields(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulFields(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, field]) =>
    nulFields(field, path === '' ? name : `${path}.${name}`),
  );
}

/** 400 naming every field, query or path parameter of the request that holds a NUL character. */
export function refuseNulCharacters(request: FastifyRequest): void {
  const fields = [request.params, request.query, request.body].flatMap((part) => nulFields(part));
  if (fields.length > 0)
    throw invalidFields(fields.map((field) => ({ field, message: 'must not contain the NUL character' })));
}
