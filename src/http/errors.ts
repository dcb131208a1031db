/** One offending field of a request: `{ path: "user.phone", message: "..." }`. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * An error that becomes an HTTP answer. Everything a handler throws that is not
 * an HttpError is a bug and answers 500 without leaking its message.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    // An answer to the client, not a fault: no stack is ever shown or logged, and capturing one
    // cost more than the rest of a 4xx answer (refused tokens and 429s come in floods).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = "HttpError";
  }
}

export const badRequest = (message: string, details: readonly ErrorDetail[] = [], code = "bad_request") =>
  new HttpError(400, code, message, details);

/** A 400 that names the fields: what every validation failure answers. */
export const invalidFields = (details: readonly ErrorDetail[]) =>
  new HttpError(400, "invalid_request", `invalid request: ${details.map((d) => d.path).join(", ")}`, details);

export const unauthorized = (message = "missing or invalid credentials") =>
  new HttpError(401, "unauthorized", message, [], { "www-authenticate": 'Bearer realm="reachkit"' });

export const forbidden = (message: string) => new HttpError(403, "forbidden", message);

export const notFound = (message = "not found") => new HttpError(404, "not_found", message);

export const conflict = (message: string) => new HttpError(409, "conflict", message);

/** The JSON error body of DESIGN.md §5. */
export function errorBody(traceId: string, error: HttpError): { error: Record<string, unknown> } {
  return {
    error: {
      id: traceId,
      code: error.code,
      message: error.message,
      ...(error.details.length > 0 ? { details: error.details } : {}),
    },
  };
}
