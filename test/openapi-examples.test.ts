import { describe, expect, test } from 'bun:test';
import type { TObject, TSchema } from '@sinclair/typebox';
// Registers the string formats (date-time…) with TypeBox, as in the running service.
import 'elysia';
import { operations } from '../core/operations/index.ts';
import { isJsonQueryParam } from '../core/operations/json-query.ts';
import { FilterGroups, SortRules } from '../core/rows/filter-schema.ts';
import { closedSchemaErrors } from './support/closed-schema.ts';

/** What the JSON query parameters and loosely checked body fields must hold (their handler's check). */
const SHAPES: Record<string, TSchema> = { filter_groups: FilterGroups, sort_rules: SortRules };

/** Errors of each named part of an example against its schema, as "part: problem" lines. */
function partErrors(schema: TObject, value: Record<string, unknown>, what: string): string[] {
  return Object.entries(value).flatMap(([name, v]) => {
    const prop = schema.properties[name];
    if (!prop) return [`${what}.${name}: not a parameter of the operation`];
    const shape = isJsonQueryParam(prop) ? SHAPES[name] : prop;
    return shape ? closedSchemaErrors(shape, v).map((e) => `${what}.${name}${e}`) : [];
  });
}

describe('the API docs examples (every operation’s `example`)', () => {
  test('every operation of the table has one, with every path parameter and a body when it takes one', () => {
    const gaps = operations.flatMap((op) => {
      if (!op.example) return [`${op.name}: no example`];
      const problems: string[] = [];
      const params = Object.keys(op.params?.properties ?? {});
      const given = Object.keys(op.example.params ?? {});
      if (params.sort().join() !== given.sort().join()) problems.push(`${op.name}: path parameters ${given} of ${params}`);
      if (Boolean(op.body) !== (op.example.body !== undefined)) problems.push(`${op.name}: body example and body disagree`);
      return problems;
    });
    expect(gaps).toEqual([]);
  });

  test('each answer fits its operation’s response schema, every object closed', () => {
    const misfits = operations.flatMap((op) => closedSchemaErrors(op.response, op.example?.response).map((e) => `${op.name} ${e}`));
    expect(misfits).toEqual([]);
  });

  test('each request fits the operation’s input schemas and the filter shapes its handler checks', () => {
    const misfits = operations.flatMap((op) => {
      const ex = op.example;
      if (!ex) return [];
      const errors = [
        ...(op.params ? partErrors(op.params, ex.params ?? {}, 'params') : []),
        ...(op.query ? partErrors(op.query, ex.query ?? {}, 'query') : []),
        ...(op.body ? closedSchemaErrors(op.body, ex.body).map((e) => `body${e}`) : []),
      ];
      const body = (ex.body ?? {}) as Record<string, unknown>;
      for (const [name, shape] of Object.entries(SHAPES)) {
        if (body[name] !== undefined) errors.push(...closedSchemaErrors(shape, body[name]).map((e) => `body.${name}${e}`));
      }
      return errors.map((e) => `${op.name} ${e}`);
    });
    expect(misfits).toEqual([]);
  });
});
