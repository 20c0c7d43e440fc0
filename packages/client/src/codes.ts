/**
 * The stable `code` of every error the client throws: branch on it (or on the error's class), never
 * on `message`, which is the server's text for people.
 */
export type PlacardErrorCode =
  /** 400, or an argument refused locally before any request (`ValidationError`). */
  | 'invalid_request'
  /** 401: the key is missing, malformed, unknown, revoked or expired (`AuthenticationError`). */
  | 'unauthorized'
  /** 403: the operator suspended the key (`KeySuspendedError`). */
  | 'key_suspended'
  /** 403: the key was sent with a browser's headers (`ForbiddenError`). */
  | 'sent_from_browser'
  /** Another 403 (`ForbiddenError`). */
  | 'forbidden'
  /** 404: the campaign does not exist or is no longer running (`NotFoundError`). */
  | 'not_found'
  /** 422: the Idempotency-Key was already used for a different request (`PlacardError`). */
  | 'idempotency_key_reused'
  /** Another 422: the fields were understood but break a rule (`PlacardError`). */
  | 'unprocessable'
  /** 429 after the retries allowed (`RateLimitedError`). */
  | 'rate_limited'
  /** Another status the contract does not name for these calls (`PlacardError`). */
  | 'unexpected_status'
  /** 5xx after the retries allowed (`ServerError`). */
  | 'server_error'
  /** No answer: the connection failed, after the retries allowed (`ServerError`). */
  | 'network_error'
  /** No answer within `timeoutMs`, after the retries allowed (`ServerError`). */
  | 'timeout'
  /** A 2xx answer that is not what the contract says (`ServerError`). */
  | 'malformed_response'
  /** A display rule was broken (`UsageError`). */
  | 'usage'
  /** The client's options or where it runs (a browser) are wrong (`PlacardError`, at construction). */
  | 'configuration';

/**
 * The partner API's bodies are the contract's, `{status, message}` without a code (partner API section 7), so where
 * one status covers cases a caller must tell apart, the contract's message tells them. These are
 * the only messages the client reads, here and nowhere else; a test checks them against the
 * server's.
 */
export const CONTRACT_MESSAGES: ReadonlyMap<number, ReadonlyMap<string, PlacardErrorCode>> = new Map([
  [
    403,
    new Map<string, PlacardErrorCode>([
      ['api key suspended', 'key_suspended'],
      ['api keys must only be used from a server', 'sent_from_browser'],
    ]),
  ],
  [
    422,
    new Map<string, PlacardErrorCode>([
      ['Idempotency-Key was already used for a different request', 'idempotency_key_reused'],
    ]),
  ],
]);

/** The code of each status the contract names, when its message names no more specific case. */
const CODE_BY_STATUS: ReadonlyMap<number, PlacardErrorCode> = new Map<number, PlacardErrorCode>([
  [400, 'invalid_request'],
  [401, 'unauthorized'],
  [403, 'forbidden'],
  [404, 'not_found'],
  [422, 'unprocessable'],
  [429, 'rate_limited'],
]);

/** The code of a non-2xx answer: by the contract's message where it tells cases apart, else by status. */
export function codeOfAnswer(status: number, message: string | undefined): PlacardErrorCode {
  const byMessage = message === undefined ? undefined : CONTRACT_MESSAGES.get(status)?.get(message);
  return byMessage ?? CODE_BY_STATUS.get(status) ?? (status >= 500 ? 'server_error' : 'unexpected_status');
}
