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
    super('unauthorized', message);
  }
}
