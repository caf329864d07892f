import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { ServiceError } from '../../core/errors.ts';
import { inArgumentTerms } from '../../doors/mcp/argument-names.ts';
import { errorEnvelope, failureEnvelope, success, toolResult } from '../../doors/mcp/envelope.ts';
import { decodeArguments, toolArguments } from '../../doors/mcp/tool-arguments.ts';
import { defineOperation } from '../../core/operations/operation.ts';

describe('error envelopes', () => {
  test('a ServiceError keeps its code and status; a string detail becomes {message}', () => {
    expect(errorEnvelope(new ServiceError('not_found', 'Project x not found'), 'r1')).toEqual({
      ok: false,
      error: true,
      code: 'not_found',
      detail: { message: 'Project x not found' },
      status_code: 404,
    });
    expect(errorEnvelope(new ServiceError('validation_error', { message: 'bad', errors: [] }, { status: 400 }), 'r1')).toMatchObject({
      status_code: 400,
      detail: { message: 'bad', errors: [] },
    });
  });

  test('a mapped failure keeps its code and status; one the log explains names its request id', () => {
    const env = failureEnvelope({
      code: 'unavailable',
      status: 503,
      detail: 'The database is unreachable',
      headers: { 'retry-after': '5' },
      requestId: 'r2',
    });
    expect(env).toEqual({
      ok: false,
      error: true,
      code: 'unavailable',
      detail: { message: 'The database is unreachable', request_id: 'r2' },
      status_code: 503,
    });
  });

  test('anything else is internal_error without its message or stack', () => {
    const env = errorEnvelope(new TypeError('cannot read x of undefined at /srv/app.ts:1'), 'r3');
    expect(env).toEqual({
      ok: false,
      error: true,
      code: 'internal_error',
      detail: { message: expect.stringContaining('r3'), request_id: 'r3' },
      status_code: 500,
    });
    expect(JSON.stringify(env)).not.toContain('/srv/app.ts');
  });

  test('a tool result holds the envelope once as text and once as structuredContent; errors set isError', () => {
    expect(toolResult(success({ a: 1 }))).toEqual({
      content: [{ type: 'text', text: '{"ok":true,"data":{"a":1}}' }],
      structuredContent: { ok: true, data: { a: 1 } },
    });
    expect(toolResult(errorEnvelope(new ServiceError('forbidden', 'no'), 'r')).isError).toBe(true);
  });
});

describe('tool arguments generated from an operation', () => {
  const op = defineOperation({
    name: 'demo',
    summary: 'Demo',
    description: 'Demo operation.',
    hint: 'write',
    method: 'POST',
    path: '/things/{thing_id}',
    params: Type.Object({ thing_id: Type.String() }),
    query: Type.Object({ page: Type.Integer({ default: 1 }), where: Type.Optional(Type.String({ contentMediaType: 'application/json' })) }),
    body: Type.Object({
      label: Type.String(),
      tags: Type.Optional(Type.Array(Type.String())),
      meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    response: Type.Object({}),
    handler: async () => ({}),
  });
  const tool = toolArguments(op, { label: 'Say it nicely.' });

  test('path, query and body sit side by side; objects, arrays and JSON strings are *_json', () => {
    expect(Object.keys(tool.inputSchema.properties as object)).toEqual([
      'thing_id',
      'page',
      'where_json',
      'label',
      'tags_json',
      'meta_json',
      'idempotency_key',
    ]);
    expect(tool.inputSchema.required).toEqual(['thing_id', 'label']);
    expect((tool.inputSchema.properties as any).label.description).toBe('Say it nicely.');
    expect((tool.inputSchema.properties as any).tags_json.description).toContain('"type":"array"');
  });

  test('decoding gives the REST shapes back: text query values, lazily parsed JSON query values and body', () => {
    const call = decodeArguments(op, tool, {
      thing_id: 't1',
      page: 2,
      where_json: '{"a":1}',
      label: 'x',
      tags_json: '["a","b"]',
      meta_json: { k: 1 },
    });
    expect(call.params).toEqual({ thing_id: 't1' });
    expect(call.query.page).toBe('2');
    expect((call.query.where as () => unknown)()).toEqual({ a: 1 });
    expect(call.body()).toEqual({ label: 'x', tags: ['a', 'b'], meta: { k: 1 } });
  });

  test('malformed JSON in a query argument fails only when it is read, naming the argument', () => {
    const call = decodeArguments(op, tool, { thing_id: 't1', label: 'x', where_json: '{oops' });
    expect(() => (call.query.where as () => unknown)()).toThrow(
      expect.objectContaining({ code: 'parse_error', status: 400, detail: expect.objectContaining({ argument: 'where_json' }) }),
    );
  });

  test('malformed JSON in a body argument fails only when the body is read', () => {
    const call = decodeArguments(op, tool, { thing_id: 't1', label: 'x', tags_json: '[oops' });
    expect(() => call.body()).toThrow(expect.objectContaining({ code: 'parse_error', status: 400 }));
  });
});

describe('what waits for the ownership check', () => {
  const op = defineOperation({
    name: 'demo_rows',
    summary: 'Demo',
    description: 'Demo operation.',
    hint: 'write',
    method: 'POST',
    path: '/things/{thing_id}/rows',
    params: Type.Object({ thing_id: Type.String() }),
    body: Type.Object({ rows: Type.Array(Type.Unknown()), owner_id: Type.Optional(Type.String()) }),
    invalidStatus: 403,
    response: Type.Object({}),
    handler: async () => ({}),
  });
  const tool = toolArguments(op);

  test('path ids are decoded at once; a missing one is refused with the operation’s invalid status', () => {
    expect(decodeArguments(op, tool, { thing_id: 't1', rows_json: '[]' }).params).toEqual({ thing_id: 't1' });
    expect(() => decodeArguments(op, tool, { rows_json: '[]' })).toThrow(
      expect.objectContaining({
        code: 'validation_error',
        status: 403,
        detail: expect.objectContaining({ errors: [{ path: 'thing_id', message: 'is required' }] }),
      }),
    );
  });

  test('unknown arguments and a bad idempotency_key are told by check() and by the body, not when decoding', () => {
    const decoded = decodeArguments(op, tool, { thing_id: 't1', rows_json: '[]', colour: 'red', idempotency_key: 5 });
    expect(decoded.idempotencyKey).toBeUndefined();
    const unknown = expect.objectContaining({
      status: 403,
      detail: expect.objectContaining({ message: expect.stringMatching(/^Unknown argument colour;/) }),
    });
    expect(() => decoded.check()).toThrow(unknown);
    expect(() => decoded.body()).toThrow(unknown);
    const badKey = decodeArguments(op, tool, { thing_id: 't1', rows_json: '[]', idempotency_key: '' });
    expect(() => badKey.check()).toThrow(
      expect.objectContaining({
        status: 422,
        detail: expect.objectContaining({ errors: [{ path: 'idempotency_key', message: 'must be a non-empty string' }] }),
      }),
    );
  });

  test('an overlong id in a body argument is refused when the body is read, without its text', () => {
    const decoded = decodeArguments(op, tool, { thing_id: 't1', rows_json: '[]', owner_id: 'o'.repeat(129) });
    expect(() => decoded.body()).toThrow(
      expect.objectContaining({
        status: 403,
        detail: {
          message: 'owner_id is 129 characters long; ids are at most 128',
          errors: [{ path: 'owner_id', message: 'is longer than 128 characters' }],
        },
      }),
    );
  });
});

describe('validation errors in the tool’s terms', () => {
  const renames = new Map([
    ['rows', 'rows_json'],
    ['form_data', 'form_data_json'],
  ]);
  const failure = (detail: Record<string, unknown> | string) => ({ code: 'validation_error' as const, status: 422, detail, headers: {} });

  test('error paths and the fields a message names as fields take the argument’s name; REST’s "Invalid body" reads "Invalid arguments"', () => {
    expect(
      inArgumentTerms(
        failure({ message: 'Invalid body: form_data.x expected string', errors: [{ path: 'form_data.x', message: 'expected string' }] }),
        renames,
      ).detail,
    ).toEqual({
      message: 'Invalid arguments: form_data_json.x expected string',
      errors: [{ path: 'form_data_json.x', message: 'expected string' }],
    });
    expect(inArgumentTerms(failure({ message: 'rows[2]: Missing required columns: Name.', row_index: 2 }), renames).detail).toEqual({
      message: 'rows_json[2]: Missing required columns: Name.',
      row_index: 2,
    });
  });

  test('the same word in prose, in quotes, or inside another name stays; other codes are left alone', () => {
    const prose = { message: 'The project would hold 2,000 rows per project; no column is named "rows"; see max_rows' };
    expect(inArgumentTerms(failure(prose), renames).detail).toEqual(prose);
    const forbidden = { code: 'forbidden' as const, status: 403, detail: { message: 'rows[0] is over quota' }, headers: {} };
    expect(inArgumentTerms(forbidden, renames)).toBe(forbidden);
  });
});
