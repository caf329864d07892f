import http from 'node:http';
import { ServiceError } from '../../core/errors.ts';
import { readLimited } from '../../core/read-limited.ts';

/**
 * Transport refusals of the REST door, made before any operation runs, each with a JSON `detail`
 * that says what to do instead (Bun's own refusals have an empty body).
 */

/**
 * Bun refuses a request whose header block passes its own limit (16 KiB by default) with an empty
 * 431. Its limit is raised far above MAX_HEADER_BYTES so that ours answers first, readably; only
 * a header block past this ceiling still meets Bun's bare refusal. Process-wide, set once.
 */
const NATIVE_HEADER_CEILING = 1 << 20;

export function raiseNativeHeaderLimit(maxHeaderBytes: number): void {
  const wanted = Math.max(NATIVE_HEADER_CEILING, maxHeaderBytes * 2);
  if (http.maxHeaderSize < wanted) (http as { maxHeaderSize: number }).maxHeaderSize = wanted;
}

/** The request line and header block as sent, give or take the protocol's few separator bytes. */
function headerBlockBytes(request: Request): number {
  const url = request.url;
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  let bytes = request.method.length + (pathStart < 0 ? 1 : Buffer.byteLength(url) - pathStart) + 12;
  for (const [name, value] of request.headers) bytes += name.length + Buffer.byteLength(value) + 4;
  return bytes;
}

/** A 431 when the URL and headers pass MAX_HEADER_BYTES; the long-filter case gets its way out. */
export function headerBlockRefusal(request: Request, maxHeaderBytes: number, searchPath: string): ServiceError | null {
  const bytes = headerBlockBytes(request);
  if (bytes <= maxHeaderBytes) return null;
  return new ServiceError(
    'headers_too_large',
    `The URL and headers take ${bytes} bytes; the limit is ${maxHeaderBytes} (MAX_HEADER_BYTES). ` +
      `Filters too long for a URL go in a JSON body: POST ${searchPath}`,
  );
}

/** application/json, with parameters (charset) or as a +json suffix type. */
function isJsonMediaType(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type);
}

/** A 415 for a body that says it is not JSON, or that comes with no Content-Type at all. */
export function mediaTypeRefusal(request: Request): ServiceError | null {
  const contentType = request.headers.get('content-type');
  if (contentType !== null) {
    if (isJsonMediaType(contentType)) return null;
  } else {
    // No Content-Type and no body: the operation answers that the body is missing.
    const length = request.headers.get('content-length');
    if (request.headers.get('transfer-encoding') === null && (length === null || length === '0')) return null;
  }
  return new ServiceError(
    'unsupported_media_type',
    `The body must be JSON sent with "Content-Type: application/json"${contentType === null ? ' (none was sent)' : `, not "${contentType.slice(0, 100)}"`}`,
  );
}

/** A body larger than a route takes: a 413 naming its limit (the caller's own error when it has one). */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
  constructor(readonly maxBytes: number) {
    super(`The body is larger than ${maxBytes} bytes`);
  }
}

/**
 * A request's body, read up to `maxBytes` and no further: a chunked body has no Content-Length to
 * check up front, and the listener's own cap is as high as the largest upload, so every route
 * bounds what it reads itself.
 */
export async function readBodyLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  const bytes = await readLimited(request.body, maxBytes, { declared: request.headers.get('content-length') });
  if (bytes === null) throw new BodyTooLarge(maxBytes);
  return bytes;
}

/** readBodyLimited, as text (UTF-8). */
export async function readTextLimited(request: Request, maxBytes: number): Promise<string> {
  return new TextDecoder().decode(await readBodyLimited(request, maxBytes));
}
