import type { FastifySchema, RouteOptions } from 'fastify';
import { errors, managementErrors } from './common.js';

/** Methods Fastify reads no body for. */
const BODILESS = new Set(['GET', 'HEAD']);

/**
 * Fastify reads a body on every other method, whether or not the route expects one, so any such
 * documented route can answer 413 (too large) and 415 (not JSON) before its handler runs.
 */
export function withBodyErrors({
  schema,
  url,
  route,
}: {
  schema: FastifySchema;
  url: string;
  route: RouteOptions;
}): {
  schema: FastifySchema;
  url: string;
} {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (schema?.response === undefined || methods.every((method) => BODILESS.has(method)))
    return { schema, url };
  // A management route's error bodies carry their code.
  const bodyErrors = url.startsWith('/admin/') ? managementErrors(413, 415) : errors(413, 415);
  return { schema: { ...schema, response: { ...(schema.response as object), ...bodyErrors } }, url };
}

interface JsonSchema {
  required?: unknown;
  allOf?: JsonSchema[];
}

/** Whether a body schema names a field that must be present. */
function requiresFields(schema: JsonSchema | undefined): boolean {
  if (schema === undefined) return false;
  if (Array.isArray(schema.required) && schema.required.length > 0) return true;
  return (schema.allOf ?? []).some(requiresFields);
}

type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } };

/**
 * The document generator marks every request body required; a body whose fields are all optional
 * may be left out (the routes read an absent body as `{}`), so it is marked optional here.
 */
export function markOptionalBodies<T extends object>(paths: T): T {
  for (const operations of Object.values(paths) as Record<string, Operation>[]) {
    for (const operation of Object.values(operations)) {
      const body = operation.requestBody;
      if (body !== undefined && !requiresFields(body.content?.['application/json']?.schema)) {
        body.required = false;
      }
    }
  }
  return paths;
}
