import type { PlacardErrorCode } from './codes.js';

/**
 * Every error the client throws is a `PlacardError`; `status` is the HTTP status when there was one,
 * `code` says what went wrong, stably (`PlacardErrorCode`). One thrown as a `PlacardError` itself,
 * without a more specific code, is about the client's options or where it runs (`configuration`).
 */
export class PlacardError extends Error {
  override name = 'PlacardError';
  readonly code: PlacardErrorCode;
  constructor(
    message: string,
    readonly status: number | null = null,
    options: { cause?: unknown; code?: PlacardErrorCode } = {},
  ) {
    super(message, options);
    this.code = options.code ?? 'configuration';
  }
}

/**
 * The base of an error class that always has one code. Its name is written out, not read from the
 * class, so that it survives a bundler that renames classes.
 */
function errorOfCode<Code extends PlacardErrorCode>(
  name: string,
  code: Code,
): new (...args: ConstructorParameters<typeof PlacardError>) => PlacardError & { readonly code: Code } {
  return class extends PlacardError {
    override name = name;
    override readonly code: Code = code;
  };
}

/** 401: the key is missing, malformed, unknown, revoked or expired. Never retried: fix the key. */
export class AuthenticationError extends errorOfCode('AuthenticationError', 'unauthorized') {}

/** 403 `api key suspended`: the operator suspended the key (for click fraud). Never retried. */
export class KeySuspendedError extends errorOfCode('KeySuspendedError', 'key_suspended') {}

/** 403 for another reason, e.g. the key was sent by a browser (`sent_from_browser`). Never retried. */
export class ForbiddenError extends PlacardError {
  override name = 'ForbiddenError';
  declare readonly code: 'sent_from_browser' | 'forbidden';
  constructor(message: string, status: number, code: ForbiddenError['code']) {
    super(message, status, { code });
  }
}

/** 429 after the retries allowed: wait `retryAfterMs` before calling again. */
export class RateLimitedError extends PlacardError {
  override name = 'RateLimitedError';
  override readonly code = 'rate_limited';
  constructor(
    message: string,
    /** The server's `Retry-After`, in milliseconds. */
    readonly retryAfterMs: number,
  ) {
    super(message, 429);
  }
}

/** 400 (or refused locally before any request): an argument breaks the server's rules. */
export class ValidationError extends errorOfCode('ValidationError', 'invalid_request') {}

/** 404: the campaign does not exist or is no longer running. */
export class NotFoundError extends errorOfCode('NotFoundError', 'not_found') {}

/**
 * 5xx after the retries allowed (`server_error`), a network failure (`network_error`), a timeout
 * (`timeout`), or a response that is not what the contract says (`malformed_response`, never
 * returned as data). `status` is null when no valid response arrived.
 */
export class ServerError extends PlacardError {
  override name = 'ServerError';
  declare readonly code: 'server_error' | 'network_error' | 'timeout' | 'malformed_response';
  constructor(
    message: string,
    status: number | null,
    options: { cause?: unknown; code: ServerError['code'] },
  ) {
    super(message, status, options);
  }
}

/** A display-handle rule was broken (impression twice, click before impression, wrong placement). */
export class UsageError extends errorOfCode('UsageError', 'usage') {}
