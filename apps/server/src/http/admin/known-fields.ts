import type { FastifyRequest } from 'fastify';
import { DomainError, type FieldProblem } from '../../domain/errors.js';

/** The parts of a JSON Schema (as the route schemas beside the handlers write them) read here. */
export interface BodySchema {
  properties?: Record<string, BodySchema>;
  allOf?: BodySchema[];
  anyOf?: BodySchema[];
  items?: BodySchema;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Fields a route's body schema leaves out but its handler reads, to refuse them with a message
     * more useful than "unknown field" (a campaign's `status`, which changes through actions).
     */
    refusedByHandler?: readonly string[];
  }
}

/** The properties an object schema names, over all its `allOf` parts; undefined when it names none. */
function namedFields(schema: BodySchema): Map<string, BodySchema> | undefined {
  const parts = [schema, ...(schema.allOf ?? [])].filter((part) => part.properties !== undefined);
  // A nullable object (`anyOf: [object, null]`) describes its object branch.
  if (parts.length === 0) {
    const object = schema.anyOf?.find((branch) => branch.properties !== undefined || branch.allOf);
    return object && namedFields(object);
  }
  return new Map(parts.flatMap((part) => Object.entries(part.properties ?? {})));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The fields of `value` its schema does not name, as paths (`imageUrl`, `caps.monthly`,
 * `items[2].colour`). A route without a body schema takes no fields at all.
 */
export function unknownFields(value: unknown, schema: BodySchema | undefined, path = ''): string[] {
  const at = (name: string): string => (path === '' ? name : `${path}.${name}`);
  if (Array.isArray(value) && schema?.items)
    return value.flatMap((item, index) => unknownFields(item, schema.items, `${path}[${index}]`));
  if (!isObject(value)) return [];
  const known = schema === undefined ? new Map<string, BodySchema>() : namedFields(schema);
  // A schema that names no fields (free-form JSON) is not one this check can judge.
  if (known === undefined) return [];
  return Object.entries(value).flatMap(([name, field]) => {
    const fieldSchema = known.get(name);
    return fieldSchema === undefined ? [at(name)] : unknownFields(field, fieldSchema, at(name));
  });
}

/** Refuses the `names` a request carries but its route does not know, each as a problem. */
function refuse(kind: 'invalid' | 'unprocessable', what: string, names: string[], message: string): void {
  if (names.length === 0) return;
  const problems: FieldProblem[] = names.map((field) => ({ field, message }));
  const plural = names.length === 1 ? '' : 's';
  throw new DomainError(kind, `unknown ${what}${plural}: ${names.join(', ')}`, problems, 'unknown_field');
}

/**
 * Refuses what a management request carries but its route does not know, so nothing is dropped
 * silently. A query parameter is a 400: a mistyped list filter (`advertiserId` for `advertiser`)
 * would otherwise answer the whole list as if filtered. A body field is a 422 (`imageUrl`).
 */
export function refuseUnknownInput(request: FastifyRequest): void {
  const { schema, config } = request.routeOptions;
  const query = schema?.querystring as BodySchema | undefined;
  const knownParameters = (query && namedFields(query)) ?? new Map<string, BodySchema>();
  const parameters = Object.keys(request.query as object).filter((name) => !knownParameters.has(name));
  refuse('invalid', 'query parameter', parameters, 'is not a known query parameter');

  const refusedByHandler = new Set(config.refusedByHandler ?? []);
  const fields = unknownFields(request.body, schema?.body as BodySchema | undefined).filter(
    (field) => !refusedByHandler.has(field),
  );
  refuse('unprocessable', 'field', fields, 'is not a known field');
}
