/**
 * The closed set of failure kinds the services may report. `http/errors.ts` maps each to exactly one
 * HTTP status; nothing else in the code base decides status codes for domain failures.
 */
export type ErrorKind =
  | 'invalid' // the input breaks a rule (400)
  | 'unauthorized' // no valid credential (401)
  | 'forbidden' // a valid credential that may not do this (403)
  | 'not_found' // the thing does not exist or is not visible (404)
  | 'conflict' // the thing exists in a state that forbids the change (409)
  | 'unprocessable' // well-formed input the service cannot act on (422)
  | 'unavailable'; // a dependency is down or overloaded; retry later (503)

/**
 * The stable machine codes of the management API's error bodies (`code`), each with when it is
 * given; the OpenAPI document shows these texts. A client branches on `code`, never on `message`,
 * which is written for people and may be reworded. A code is never renamed or given another meaning;
 * a new case a client must tell apart gets a new code. The partner API's bodies are the contract's
 * and carry no code (partner API section 7).
 */
export const ERROR_CODES = {
  invalid_request:
    '400: a query parameter, path id or body field breaks a rule, or the body is not JSON; `problems` names each field.',
  unknown_field:
    'A query parameter (400) or body field (422) the route does not take, named in `problems`: perhaps a newer client than this server.',
  unauthorized: '401: no valid admin token (missing, malformed, unknown, revoked or expired).',
  wrong_credential: '401: a partner API key (`plc_…`) was sent where an admin token (`pla_…`) is needed.',
  forbidden: '403: the token is valid, but its account or role may not do this.',
  not_found: '404: no such object, none this token may see, or no such route.',
  conflict: "409: the object's current state forbids the change; the message names the state.",
  already_exists: '409: an object with that name, id or e-mail exists already.',
  already_done:
    '409: the object is already as the change would leave it (a key or token revoked, a key suspended, a flag reviewed, a campaign paused): a retry whose first answer was lost may take it as done.',
  body_too_large: '413: the request body is over the size limit.',
  unsupported_media_type: '415: the request body is not `application/json`.',
  unprocessable: '422: the fields were understood but break a rule; `problems` lists each.',
  rate_limited:
    '429: too many failed authentications from this client, or from all clients together: wait `Retry-After` seconds.',
  internal_error: '500: an unexpected fault; its details are only in the server log.',
  unavailable: '503: the store or the instance cannot answer now: retry after `Retry-After` seconds.',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The code of each kind when the failure has no more specific one. */
const KIND_CODES: Record<ErrorKind, ErrorCode> = {
  invalid: 'invalid_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  conflict: 'conflict',
  unprocessable: 'unprocessable',
  unavailable: 'unavailable',
};

/**
 * One thing wrong with one input: `field` names it as the caller wrote it (`title`, `caps.clicksDaily`,
 * `advertisers[0].campaigns[2].endAt`, a query parameter), `message` says what is wrong with it.
 */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A failure the caller can act on; its message is safe to show to the client. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** The fields the failure concerns, each with its problem; empty when it is about no one field. */
    readonly problems: readonly FieldProblem[] = [],
    /** The machine code of the management API's body: the kind's own unless a client must tell this case apart. */
    readonly code: ErrorCode = KIND_CODES[kind],
  ) {
    super(message);
  }
}

export const invalid = (message: string): DomainError => new DomainError('invalid', message);

/** More problems than this are counted in the message rather than spelled out (a large import). */
export const MESSAGE_PROBLEMS = 10;

/** The problems as one sentence a person can read: `title is required; weight must be …`. */
function spelledOut(problems: readonly FieldProblem[]): string {
  const shown = problems.slice(0, MESSAGE_PROBLEMS).map(({ field, message }) => `${field} ${message}`);
  const more = problems.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** A 400 about fields, each named in the message and one by one in `problems`. */
export const invalidFields = (problems: readonly FieldProblem[]): DomainError =>
  new DomainError('invalid', spelledOut(problems), problems);

/** A 400 about one field: the message reads `<field> <problem>`. */
export const invalidField = (field: string, message: string): DomainError =>
  invalidFields([{ field, message }]);

/**
 * A 422 listing every problem found, in a message readable on its own
 * (`invalid campaign: title is required; weight must be …`) and one by one in `problems`.
 */
export const unprocessable = (what: string, problems: readonly FieldProblem[]): DomainError =>
  new DomainError('unprocessable', `${what}: ${spelledOut(problems)}`, problems);
export const notFound = (message: string): DomainError => new DomainError('not_found', message);

/** A 409: an object with that name, id or e-mail exists already. */
export const alreadyExists = (message: string): DomainError =>
  new DomainError('conflict', message, [], 'already_exists');

/** A 409: the object is already as the change would leave it, so a retried change may count it done. */
export const alreadyDone = (message: string): DomainError =>
  new DomainError('conflict', message, [], 'already_done');

/**
 * A credential of the other kind, recognised by its shape alone (no look-up, so it says nothing
 * about whether any real key or token exists): an admin token on a partner route or a partner key
 * on a management route. `hint` names the credential the route expects; the message is the body,
 * which on the partner API stays the contract's bare `unauthorized`.
 */
export class WrongCredential extends DomainError {
  constructor(
    readonly hint: string,
    message: string,
  ) {
    super('unauthorized', message, [], 'wrong_credential');
  }
}
