import { pipeline, Readable } from 'node:stream';
import busboy from 'busboy';
import { refuseSpentKey } from '../../core/credits/key-caps.ts';
import { ServiceError } from '../../core/errors.ts';
import type { Kernel } from '../../core/kernel.ts';
import { EXAMPLE_IDS } from '../../core/operations/examples.ts';
import { withIdempotency } from '../../core/operations/idempotency.ts';
import { importUpload } from '../../core/services/uploads.ts';
import { failure } from './route-doc.ts';
import type { Json } from './openapi-schemas.ts';
import type { RouteCaller, RouteSpec } from './route-chain.ts';

/** The OpenAPI entry of POST …/projects/import.csv (a file body, so not an operation of the table). */
const importOperation: Json = {
  operationId: 'import_csv_file',
  summary: 'Import a CSV file',
  description:
    'Makes a project from a CSV file of any size (up to MAX_UPLOAD_BYTES, 1 GiB by default), sent as the request body (Content-Type text/csv) or as the `file` part of multipart/form-data. The file is stored as it streams in, then the builder that takes CSV files imports it as POST /projects does with csv_text: the header gives the columns, every record a row, written in large transactions with progress in builder_status, resumed after a crash without duplicates. Answers as POST /projects does, with the upload’s size.',
  tags: ['Projects'],
  parameters: [
    {
      name: 'name',
      in: 'query',
      required: false,
      description: 'The project’s name (default: the file’s name).',
      schema: { type: 'string' },
    },
    {
      name: 'builder_id',
      in: 'query',
      required: false,
      description: 'A builder that takes files (default: the one that takes text/csv, the bundled CSV import).',
      schema: { type: 'string' },
    },
    { $ref: '#/components/parameters/IdempotencyKey' },
  ],
  requestBody: {
    required: true,
    content: {
      'text/csv': { schema: { type: 'string' }, example: 'Name,Website\r\nAcme,acme.com\r\n' },
      'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } },
    },
  },
  responses: {
    201: {
      description: 'The project is made and its import queued; follow it on GET /projects/{project_id}.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['project_id', 'upload_id', 'bytes'],
            properties: { project_id: { type: 'string' }, upload_id: { type: 'string' }, bytes: { type: 'integer' } },
          },
          example: { project_id: EXAMPLE_IDS.project, upload_id: '01a20c00-5b1e-7c4d-9a2f-3e8d1c6b7a90', bytes: 104857600 },
        },
      },
    },
    401: failure('No API key or session.', 'Missing API key: send it in the service-api-key header (or sign in at /login)'),
    402: failure('Not enough credits for the builder, or the API key’s monthly cap is spent.', 'This run needs 3000 credits…'),
    403: failure(
      'The plan has no API access, or a console session’s CSRF token is missing.',
      'The workspace\'s plan "free" has no API access; upgrade it',
    ),
    409: failure(
      'An upload with the same Idempotency-Key is still running.',
      'A request with this Idempotency-Key is still running; retry shortly',
    ),
    413: failure('The file is over MAX_UPLOAD_BYTES.', 'The file is larger than 1073741824 bytes (MAX_UPLOAD_BYTES); split it'),
    415: failure(
      'Neither a CSV body nor multipart/form-data.',
      'Send the CSV as the body (Content-Type: text/csv) or as the "file" part of multipart/form-data',
    ),
    422: failure('The file is empty, has no header, or repeats a column name; nothing is kept.', 'the file "leads.csv" has no header row'),
    429: failure('Over the plan’s requests per minute.', 'Too many requests: the pro plan allows 1200 per minute per key; retry in 3 s'),
  },
  security: [{ apiKey: [] }, {}],
};

/** A multipart body that cannot be read (no boundary, cut short): the sender's fault, a 400-class answer. */
const badMultipart = (e: unknown) =>
  new ServiceError(
    'validation_error',
    `The multipart body could not be read (${(e as Error).message}): send the CSV as the part named file`,
  );

/**
 * The file of a multipart body: the stream of its `file` part (fields other than `file` are
 * ignored; use the query). Errors of the body or of the form end the file's stream with a 422.
 */
function multipartFile(request: Request): Promise<{ fileName: string; stream: AsyncIterable<Uint8Array> }> {
  return new Promise((resolve, reject) => {
    if (!request.body)
      return reject(new ServiceError('validation_error', 'The multipart body is empty: send the CSV as the part named file'));
    let parser: busboy.Busboy;
    try {
      // File names as browsers send them (UTF-8), not latin1.
      parser = busboy({ headers: Object.fromEntries(request.headers), limits: { files: 1, fields: 20 }, defParamCharset: 'utf8' });
    } catch (e) {
      return reject(badMultipart(e));
    }
    let file: Readable | undefined;
    parser.on('file', (field, stream, info) => {
      if (field !== 'file' || file) {
        stream.resume(); // not ours: drained
        return;
      }
      file = stream;
      // Its error reaches whoever reads it (the stream stays errored); until then, nobody listens.
      stream.on('error', () => {});
      resolve({ fileName: info.filename || 'upload.csv', stream: failingAs(stream, badMultipart) });
    });
    parser.on('close', () => {
      if (!file) reject(new ServiceError('validation_error', 'The multipart body has no "file" part: send the CSV as the part named file'));
    });
    // pipeline passes an error of either side to the other (a client that goes away, a form cut short).
    pipeline(Readable.fromWeb(request.body as never), parser, (e) => {
      if (!e) return;
      if (file) file.destroy(badMultipart(e));
      else reject(badMultipart(e));
    });
  });
}

/** A stream whose errors are thrown as `as(error)`. */
async function* failingAs(stream: AsyncIterable<Uint8Array>, as: (e: unknown) => Error): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of stream) yield chunk;
  } catch (e) {
    throw as(e);
  }
}

/** `POST {BASE_PATH}/projects/import.csv?name=…` (docs/enrichment.md, bulk import): a CSV of any size, streamed to storage. */
export const importRoute: RouteSpec = {
  method: 'POST',
  path: '/projects/import.csv',
  caller: 'key-or-session',
  body: 'stream',
  doc: importOperation,
  async handle(ctx) {
    const { kernel, request } = ctx;
    const declared = Number(request.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > kernel.config.maxUploadBytes) {
      throw new ServiceError(
        'payload_too_large',
        `The file is larger than ${kernel.config.maxUploadBytes} bytes (MAX_UPLOAD_BYTES); split it`,
      );
    }
    const { workspace, keyId } = ctx.caller as RouteCaller;
    if (keyId) await refuseSpentKey(kernel, keyId);
    const url = new URL(request.url);
    const name = url.searchParams.get('name')?.trim() || undefined;
    // The kernel names no plugin: by default, the builder that declares it takes CSV files.
    const builderId =
      url.searchParams.get('builder_id') ||
      (kernel.plugins.listBuilders().find((b) => b.uploads?.mediaTypes.includes('text/csv'))?.id ?? '');
    const contentType = request.headers.get('content-type') ?? '';
    const file = await uploadedFile(kernel, request, contentType, builderId, name);
    const run = () => importUpload(kernel, workspace, { name, fileName: file.fileName, builderId, body: file.stream }, keyId);
    // With an Idempotency-Key, a retry whose answer was lost gets the first answer (one project), its body unread.
    const idempotencyKey = request.headers.get('idempotency-key');
    const made = idempotencyKey
      ? await withIdempotency(
          kernel,
          { name: 'import_csv_file', successStatus: 201 },
          workspace,
          idempotencyKey,
          { query: url.search, type: contentType, bytes: request.headers.get('content-length') },
          run,
        )
      : await run();
    return Response.json(made, { status: 201, headers: { 'cache-control': 'no-store' } });
  },
};

/** The file of the request: the body itself (text/csv, or a builder's type) or a multipart "file" part; UTF-8 only. */
async function uploadedFile(
  kernel: Kernel,
  request: Request,
  contentType: string,
  builderId: string,
  name: string | undefined,
): Promise<{ fileName: string; stream: AsyncIterable<Uint8Array> }> {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const charset = /charset\s*=\s*"?([^";]+)/i.exec(contentType)?.[1]?.trim().toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ServiceError(
      'validation_error',
      `The file must be UTF-8 (sent as charset=${charset}): save it as CSV UTF-8 and send it again`,
    );
  }
  if (type === 'multipart/form-data') return multipartFile(request);
  if (kernel.plugins.builder(builderId)?.uploads?.mediaTypes.includes(type) ?? type === 'text/csv') {
    // No body at all is an empty file (refused as such), not a stream that never ends.
    return { fileName: name ? `${name}.csv` : 'import.csv', stream: (request.body ?? []) as AsyncIterable<Uint8Array> };
  }
  throw new ServiceError(
    'unsupported_media_type',
    'Send the CSV as the body (Content-Type: text/csv) or as the "file" part of multipart/form-data',
  );
}
