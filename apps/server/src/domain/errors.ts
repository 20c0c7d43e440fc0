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

/** A failure the caller can act on; its message is safe to show to the client. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Field-level problems, for inputs with several (an import file, a campaign form). */
    readonly details: ReadonlyArray<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

export const invalid = (message: string): DomainError => new DomainError('invalid', message);
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
