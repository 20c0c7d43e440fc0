import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import { invalid, invalidField } from '../../domain/errors.js';
import { idFromText } from '../../domain/ids.js';

/**
 * How a management handler sees its request's parts: the type of each comes from its route
 * schema, through Fastify's type provider, as `validate` below leaves it. A path part is what its
 * schema says (an integer `id` arrives parsed); a body field or query parameter keeps the name its
 * schema gives and arrives as the client sent it, for the domain layer to check.
 *
 * The published providers type a part as its schema's `Static`, which holds only once Ajv has
 * validated it against that schema; these routes do not let Ajv validate (see `validate`). Replies
 * are left untyped: a test checks real responses against their schemas instead.
 */
export interface ManagementTypes extends FastifyTypeProvider {
  validator: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
  serializer: unknown;
}

/** The Fastify instance the management routes register on, typed by `ManagementTypes`. */
export type ManagementApp = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ManagementTypes
>;

/**
 * The fields `Fields` names, each as it arrived: absent, or any JSON value (or, in a query,
 * strings), until the domain layer reads it. The names are what the type checks: the route
 * refuses any other before its handler runs (`known-fields.ts`).
 */
export type AsSent<Fields> = { readonly [Name in keyof Fields]?: unknown };

/** A query's schema, as documented; its handler reads each parameter `AsSent`. */
export const query = <Schema extends TSchema>(schema: Schema): TUnsafe<AsSent<Static<Schema>>> =>
  Type.Unsafe<AsSent<Static<Schema>>>(schema);

/**
 * A JSON body's schema: the fields it names and no others (the route refuses any other with a 422,
 * so the document says `additionalProperties: false`); its handler reads each field `AsSent`.
 */
export const body = <Schema extends TSchema>(schema: Schema): TUnsafe<AsSent<Static<Schema>>> =>
  Type.Unsafe<AsSent<Static<Schema>>>({ ...schema, additionalProperties: false });

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The names of the integer properties of an object schema: a route's path ids. */
function integerProperties(schema: unknown): string[] {
  const properties = isRecord(schema) && isRecord(schema['properties']) ? schema['properties'] : {};
  return Object.entries(properties)
    .filter(([, property]) => isRecord(property) && property['type'] === 'integer')
    .map(([name]) => name);
}

/** The path with each id parsed, or the 400 that names the first that cannot be one. */
function parseIds(names: readonly string[]) {
  // The router gives every path part as text.
  return (params: Record<string, string | undefined>) => {
    const parsed: Record<string, unknown> = { ...params };
    for (const name of names) {
      const id = idFromText(params[name] ?? '');
      if (id === undefined) return { error: invalidField(name, 'must be a positive integer') };
      parsed[name] = id;
    }
    return { value: parsed };
  };
}

/** A body as fields: absent (or `null`) reads as none; anything but a JSON object is a 400. */
function bodyFields(value: unknown) {
  if (value === undefined || value === null) return { value: {} };
  if (!isRecord(value)) return { error: invalid('request body must be a JSON object') };
  return { value };
}

/**
 * The management API's validator compiler. It does not check a part against its schema: the rules
 * and their messages live in the domain layer, shared with the CLI and the dashboard (`name must
 * be 1 to 100 characters`, every problem named with its field), where Ajv's would be its own
 * (`must be string`) and would answer first. It does only what `ManagementTypes` promises:
 * parses path ids and insists on a body that is an object. Its errors are the product's, answered
 * by the error handler like any other.
 */
export const validate: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart === 'params') return parseIds(integerProperties(schema));
  if (httpPart === 'body') return bodyFields;
  return (value: unknown) => ({ value });
};
