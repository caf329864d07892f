/**
 * The one error type of the service. Its `code` maps once to an HTTP status (REST) and once to
 * the MCP envelope, so every door reports the same failure the same way.
 */
export type ErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'validation_error'
  | 'parse_error'
  | 'http_error'
  | 'internal_error'
  | 'insufficient_credits'
  | 'rate_limited'
  | 'payload_too_large'
  | 'conflict'
  | 'unavailable'
  /** REST transport refusals, made before an operation runs. */
  | 'method_not_allowed'
  | 'unsupported_media_type'
  | 'headers_too_large';

const defaultStatus: Record<ErrorCode, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  validation_error: 422,
  parse_error: 422,
  http_error: 502,
  internal_error: 500,
  insufficient_credits: 402,
  rate_limited: 429,
  payload_too_large: 413,
  conflict: 409,
  unavailable: 503,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  headers_too_large: 431,
};

/** A field-level problem, as listed in a 4xx `detail`. */
export interface FieldError {
  path: string;
  message: string;
}

export type ErrorDetail = string | Record<string, unknown>;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: ErrorDetail;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: ErrorDetail, options: { status?: number; headers?: Record<string, string> } = {}) {
    super(typeof detail === 'string' ? detail : String(detail.message ?? code));
    this.name = 'ServiceError';
    this.code = code;
    this.status = options.status ?? defaultStatus[code];
    this.detail = detail;
    this.headers = options.headers ?? {};
  }

  /** Same failure, reported with another HTTP status (e.g. 400 on POST /projects). */
  withStatus(status: number): ServiceError {
    return new ServiceError(this.code, this.detail, { status, headers: this.headers });
  }
}

/** A value the caller sent, quoted for a message: at most `max` characters (an id may be megabytes). */
export function quoted(value: unknown, max = 64): string {
  const text = String(value);
  return `"${text.length > max ? `${text.slice(0, max)}…` : text}"`;
}

export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`);

export function validationError(message: string, errors: FieldError[] = []): ServiceError {
  return new ServiceError('validation_error', errors.length ? { message, errors } : { message });
}

/**
 * The database (or the connection to it) is away: worth a 503 and a retry, not a failure of the
 * work. Storage adapters throw it in place of their driver's error; which driver errors mean
 * "away" is each storage dialect's knowledge (adapters/storage/<dialect>/…-errors.ts).
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** The database (or its connection) is away: worth a 503 and a retry, not a failure of the work. */
export function isStoreUnavailable(e: unknown): e is StoreUnavailableError {
  return e instanceof StoreUnavailableError;
}
