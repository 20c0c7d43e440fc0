/** Every error the client throws is a `PlacardError`; `status` is the HTTP status when there was one. */
export class PlacardError extends Error {
  override name = 'PlacardError';
  constructor(
    message: string,
    readonly status: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 401: the key is missing, malformed, unknown, revoked or expired. Never retried: fix the key. */
export class AuthenticationError extends PlacardError {
  override name = 'AuthenticationError';
}

/** 403 `api key suspended`: the operator suspended the key (for click fraud). Never retried. */
export class KeySuspendedError extends PlacardError {
  override name = 'KeySuspendedError';
}

/** 403 for another reason, e.g. the key was sent by a browser. Never retried. */
export class ForbiddenError extends PlacardError {
  override name = 'ForbiddenError';
}

/** 429 after the retries allowed: wait `retryAfterMs` before calling again. */
export class RateLimitedError extends PlacardError {
  override name = 'RateLimitedError';
  constructor(
    message: string,
    /** The server's `Retry-After`, in milliseconds. */
    readonly retryAfterMs: number,
  ) {
    super(message, 429);
  }
}

/** 400 (or refused locally before any request): an argument breaks the server's rules. */
export class ValidationError extends PlacardError {
  override name = 'ValidationError';
}

/** 404: the campaign does not exist or is no longer running. */
export class NotFoundError extends PlacardError {
  override name = 'NotFoundError';
}

/**
 * 5xx after the retries allowed, a network failure, a timeout, or a response that is not what the
 * contract says (never returned as data). `status` is null when no valid response arrived.
 */
export class ServerError extends PlacardError {
  override name = 'ServerError';
}

/** A display-handle rule was broken (impression twice, click before impression, wrong placement). */
export class UsageError extends PlacardError {
  override name = 'UsageError';
}
