import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { ServiceError } from '../../core/errors.ts';
import { errorEnvelope, failureEnvelope, success, toolResult } from '../../core/mcp/envelope.ts';
import { decodeArguments, toolArguments } from '../../core/mcp/tool-arguments.ts';
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
    const call = decodeArguments(tool, {
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
    const call = decodeArguments(tool, { thing_id: 't1', label: 'x', where_json: '{oops' });
    expect(() => (call.query.where as () => unknown)()).toThrow(
      expect.objectContaining({ code: 'parse_error', status: 400, detail: expect.objectContaining({ argument: 'where_json' }) }),
    );
  });

  test('malformed JSON in a body argument fails only when the body is read', () => {
    const call = decodeArguments(tool, { thing_id: 't1', label: 'x', tags_json: '[oops' });
    expect(() => call.body()).toThrow(expect.objectContaining({ code: 'parse_error', status: 400 }));
  });
});
