/**
 * Every failure a client can see is an ApiError: raised where the fact is known, turned into
 * `{ error: { code, message, hint } }` in one place (src/http/envelope.ts).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly hint?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toBody() {
    return { error: { code: this.errorCode, message: this.message, ...(this.hint ? { hint: this.hint } : {}) } };
  }
}

export class BadRequest extends ApiError {
  constructor(code: string, message: string, hint?: string) {
    super(400, code, message, hint);
  }
}

export class Unauthorized extends ApiError {
  constructor(message = "The API key is missing, invalid, revoked or expired.") {
    super(
      401,
      "invalid_api_key",
      message,
      "Send a valid key as 'Authorization: Bearer <API_KEY>'; create one with `crier keys create`.",
    );
  }
}

export class MissingScope extends ApiError {
  constructor(scope: string) {
    super(
      403,
      "missing_scope",
      `This API key lacks the '${scope}' scope.`,
      `Create a key that includes '${scope}' (crier keys create --scopes ${scope}).`,
    );
  }
}

export class Forbidden extends ApiError {
  constructor(code: string, message: string, hint?: string) {
    super(403, code, message, hint);
  }
}

export class NotFound extends ApiError {
  constructor(what: string, code = "not_found", hint?: string) {
    super(
      404,
      code,
      `${what} not found.`,
      hint ?? "Check the id; records of other profiles are not visible to this key.",
    );
  }
}

export class Conflict extends ApiError {
  constructor(code: string, message: string, hint?: string) {
    super(409, code, message, hint);
  }
}

export class Unprocessable extends ApiError {
  constructor(code: string, message: string, hint?: string) {
    super(422, code, message, hint);
  }
}

export class PayloadTooLarge extends ApiError {
  constructor(message = "The request body is too large.", hint?: string) {
    super(413, "payload_too_large", message, hint ?? "Send a smaller body.");
  }
}

export class MethodNotAllowed extends ApiError {
  constructor(method: string, path: string, allowed: string[]) {
    super(
      405,
      "method_not_allowed",
      `${path} does not answer ${method}.`,
      `Use ${allowed.join(" or ")}; /openapi.json lists the operations of every path.`,
      { allow: allowed.join(", ") },
    );
  }
}

export class UnsupportedMediaType extends ApiError {
  constructor(contentType: string) {
    super(
      415,
      "unsupported_media_type",
      `This route reads a JSON body; the request was sent as ${contentType}.`,
      "Send the body as JSON with the header Content-Type: application/json (curl: -H 'Content-Type: application/json').",
    );
  }
}

export class InternalError extends ApiError {
  constructor(requestId: string) {
    super(
      500,
      "internal_error",
      "Something went wrong on our side.",
      `Quote request id ${requestId} when reporting this.`,
    );
  }
}

/** A dashboard call without a live session cookie. */
export class NotSignedIn extends ApiError {
  constructor(message = "You are not signed in, or the session has ended.") {
    super(401, "not_signed_in", message, "Sign in again on the dashboard, or send an API key as a bearer token.");
  }
}

/** A session call without the session's CSRF token, or from a page of another site. */
export class CsrfRefused extends ApiError {
  constructor(message: string) {
    super(
      403,
      "csrf_refused",
      message,
      "Calls made with the session cookie must come from the dashboard's own origin and carry X-CSRF-Token (from GET /auth/session).",
    );
  }
}

/**
 * The database does not answer: the same request can be sent again shortly. Nothing was done, unless a
 * write got no answer at all (`mayHaveApplied`): then it may have reached the database, and the client is
 * told so rather than promised otherwise.
 */
export class DatabaseUnavailable extends ApiError {
  constructor(retryAfterSeconds = 2, mayHaveApplied = false) {
    super(
      503,
      "database_unavailable",
      mayHaveApplied
        ? "The database did not answer in time; a change this request made may or may not have been applied."
        : "The database is not reachable right now; nothing was changed.",
      mayHaveApplied
        ? `Read the resource again, or send the request again in ${retryAfterSeconds} s with the same Idempotency-Key (see Retry-After).`
        : `Send the request again in ${retryAfterSeconds} s (see Retry-After).`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}

/** The media store has no room for the file (a full disk or quota, or an S3 store refusing writes); nothing was kept. */
export class InsufficientStorage extends ApiError {
  constructor(where: string) {
    super(
      507,
      "insufficient_storage",
      `The media store has no room for this file (${where}); nothing was stored.`,
      "Free space in the media store (DATA_DIR/media, or the S3 bucket's quota), then upload again with a new ticket or the same one if it is still open.",
    );
  }
}

/** The media store could not be reached; nothing was stored and the same request can be sent again. */
export class StorageUnavailable extends ApiError {
  constructor(retryAfterSeconds = 5) {
    super(
      503,
      "storage_unavailable",
      "The media store did not take the file right now; nothing was stored.",
      `Send the request again in ${retryAfterSeconds} s (see Retry-After).`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}

/** The database's disk is full: it refuses writes, reads still work, and it takes writes again once space is freed. */
export class DatabaseStorageFull extends ApiError {
  constructor(retryAfterSeconds = 10) {
    super(
      503,
      "storage_full",
      "The database's disk is full, so it cannot store this change; nothing was changed.",
      `Free disk space where the database lives (DATA_DIR, or the PostgreSQL server's disk); writes resume by themselves, without a restart. Send the request again in ${retryAfterSeconds} s (see Retry-After).`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}
