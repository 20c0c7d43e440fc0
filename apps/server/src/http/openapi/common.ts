import { Type, type TSchema } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../../domain/errors.js';
import { INPUT_STATUSES } from '../errors.js';

/** Every error body (partner API section 7, D8). */
export const ErrorBody = Type.Object(
  {
    status: Type.Literal('error'),
    message: Type.String({ description: 'What went wrong, for people; never a stack trace.' }),
  },
  { $id: 'Error', description: 'The body of every error response.', additionalProperties: false },
);

/** The management error bodies' `code`, listed with each code's meaning (`ERROR_CODES`). */
export const ErrorCodeSchema = Type.Unsafe<ErrorCode>({
  $id: 'ErrorCode',
  type: 'string',
  enum: Object.keys(ERROR_CODES),
  description: `What went wrong, for programs: stable, never reworded; branch on it, not on \`message\`.\n\n${Object.entries(
    ERROR_CODES,
  )
    .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
    .join('\n')}`,
});

const managementErrorFields = {
  status: Type.Literal('error'),
  code: Type.Unsafe<ErrorCode>(Type.Ref('ErrorCode')),
  message: Type.String({ description: 'What went wrong, for people.' }),
};

/** The management API's error body: the contract's with a machine `code`. */
export const ManagementErrorBody = Type.Object(managementErrorFields, {
  $id: 'ManagementError',
  description: 'The body of a management error: the error body with its machine code.',
  additionalProperties: false,
});

/**
 * The management API's body of a 400 or 422: with the problems one by one, so a form can show each
 * beside its field.
 */
export const ManagementInputErrorBody = Type.Object(
  {
    ...managementErrorFields,
    message: Type.String({
      description: 'What went wrong, for people: every problem, each after the field it concerns.',
    }),
    problems: Type.Array(
      Type.Object(
        {
          field: Type.String({
            description:
              'The body field or query parameter, as a path for nested ones: `caps.clicksDaily`, `advertisers[0].campaigns[2].endAt`.',
          }),
          message: Type.String({
            description: 'What is wrong with it: `is required`, `is not a known field`.',
          }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'One entry per problem; empty when the mistake concerns no one field (a body that is not JSON).',
      },
    ),
  },
  {
    $id: 'ManagementInputError',
    description:
      'The body of a management 400 or 422: the management error body with each problem and its field.',
    additionalProperties: false,
  },
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
  400: 'A parameter or field is missing or invalid; on the management API, `problems` names it.',
  401: 'The credentials are missing, malformed or not valid. A partner API key is told that the route takes an admin token (`unauthorized: this route takes an admin token (pla_...), not a partner API key`).',
  403: 'The credentials are valid but may not do this.',
  404: 'Not found.',
  409: 'The change conflicts with the current state.',
  413: 'The request body is too large.',
  422: 'The fields were understood but break a rule, or one is not known; the message says which, and on the management API `problems` lists each with its field.',
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

/** The error part of a management route's `response` schema: every body has a code, 400 and 422 list their problems. */
export function managementErrors(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        ...Type.Ref(INPUT_STATUSES.has(status) ? 'ManagementInputError' : 'ManagementError'),
        description: ERROR_MEANINGS[status],
      },
    ]),
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
