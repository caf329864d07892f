import { type Static, Type } from '@sinclair/typebox';

const Terms = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200, description });

const Range = (description: string) =>
  Type.Object(
    {
      min: Type.Optional(Type.Number({ minimum: 0, description: 'Lowest accepted value (inclusive).' })),
      max: Type.Optional(Type.Number({ minimum: 0, description: 'Highest accepted value (inclusive).' })),
    },
    { additionalProperties: false, description },
  );

/**
 * An Ideal Customer Profile: what a good-fit company looks like. Every criterion is optional;
 * the ones left out are not scored (see core/icp/score.ts for which row columns each one reads).
 */
export const IcpDefinitionSchema = Type.Object(
  {
    industries: Type.Optional(Terms('Industries that fit, e.g. ["software", "fintech"]; matched against the Industry/Category column.')),
    employee_range: Type.Optional(Range('Head-count range, e.g. {"min": 50, "max": 500}; matched against the Employees column.')),
    revenue_range: Type.Optional(
      Range('Annual revenue range in currency units, e.g. {"min": 1000000}; matched against the Revenue column.'),
    ),
    locations: Type.Optional(
      Terms('Countries, regions or cities, e.g. ["France", "Berlin"]; matched against Location/Country/City/Address.'),
    ),
    keywords: Type.Optional(Terms('Words that signal a fit, e.g. ["saas", "api"]; matched against Name/Description/Keywords.')),
    titles: Type.Optional(Terms('Job titles of the people you target, e.g. ["CTO", "Head of Sales"]; matched against the Title column.')),
  },
  { additionalProperties: false },
);

export type IcpDefinition = Static<typeof IcpDefinitionSchema>;
export type IcpCriterion = keyof IcpDefinition;
