import { Type, type TSchema } from 'typebox';

/** Every error body (contract section 7, D8). */
export const ErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    message: Type.String({ description: 'What went wrong, for people; never a stack trace.' }),
  },
  { $id: 'Error', description: 'The body of every error response.', additionalProperties: false },
);

/** An ISO 8601 instant, as every management response writes times. */
export const Instant = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const NullableInstant = Nullable(Instant);

/** `{status: "success", data}`: the envelope of single management results. */
export const One = <T extends TSchema>(data: T) => Type.Object({ status: Type.Literal('success'), data });

/** A page of management results; `nextCursor` is null on the last page. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    status: Type.Literal('success'),
    data: Type.Array(item),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null on the last page.',
    }),
  });

export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'The `nextCursor` of the previous page.' })),
});

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

const errorRef = Type.Ref('Error');

/** Error responses by status, each described once. */
const ERROR_MEANINGS: Record<number, string> = {
  400: 'A parameter or field is missing or invalid.',
  401: 'The credentials are missing, malformed or not valid. A partner API key is told that the route takes an admin token (`unauthorized: this route takes an admin token (pla_...), not a partner API key`).',
  403: 'The credentials are valid but may not do this.',
  404: 'Not found.',
  409: 'The change conflicts with the current state.',
  413: 'The request body is too large.',
  422: 'The fields were understood but break a rule; the message says which.',
  429: 'Too many failed authentications from this client (its address, or its IPv6 /64), or from all clients of this instance together: wait `Retry-After` seconds. A valid credential is never refused this way.',
  500: 'An unexpected fault; details are only in the server log.',
  503: 'Not available right now: retry after `Retry-After` seconds.',
};

/** The error part of a route's `response` schema. */
export function errors(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [status, { ...errorRef, description: ERROR_MEANINGS[status] }]),
  );
}

/** Gives each route schema its key as `operationId`, so generated clients get stable names. */
export function withOperationIds<T extends Record<string, object>>(
  routes: T,
): { [K in keyof T]: T[K] & { operationId: K } } {
  return Object.fromEntries(
    Object.entries(routes).map(([operationId, schema]) => [operationId, { ...schema, operationId }]),
  ) as { [K in keyof T]: T[K] & { operationId: K } };
}
