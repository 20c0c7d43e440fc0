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
