import { type Static, Type } from '@sinclair/typebox';

export const OPERATORS = [
  'eq',
  'neq',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_empty',
  'is_not_empty',
  'in',
  'not_in',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** A filter rule (docs/api.md). Documented with TypeBox; checked by filter-parse.ts for precise messages. */
export const FilterRule = Type.Object(
  {
    col_id: Type.String({ description: 'Column UUID (see the project columns).' }),
    operator: Type.Union(OPERATORS.map((o) => Type.Literal(o))),
    value: Type.Optional(Type.Unknown({ description: 'Ignored by is_empty / is_not_empty; an array for in / not_in.' })),
    field: Type.Optional(Type.Union([Type.Literal('value'), Type.Literal('status')], { default: 'value' })),
  },
  { additionalProperties: false },
);

export const FilterGroup = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        type: Type.Union([Type.Literal('and'), Type.Literal('or')]),
        rules: Type.Array(Type.Union([FilterRule, Self])),
      },
      { additionalProperties: false },
    ),
  { $id: 'FilterGroup' },
);

export const FilterGroups = Type.Array(FilterGroup, {
  description: 'Groups combine with AND; a rule may itself be a nested {type, rules} group.',
});

export const SortRule = Type.Object(
  {
    col_id: Type.String(),
    direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
    sort_as_number: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export const SortRules = Type.Array(SortRule);

export type FilterGroupsInput = Static<typeof FilterGroups>;
