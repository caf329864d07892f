import { type Static, Type } from 'workflow-service/plugin-sdk';

/** Searches and page reads one row may make when the column does not say. */
export const DEFAULT_STEPS = 6;
export const MAX_STEPS = 20;

/** The output schema of the tool's description and of the config schema's example. */
export const OUTPUT_SCHEMA_EXAMPLE = {
  type: 'object',
  properties: {
    sells_to_healthcare: { type: 'boolean', description: 'Whether the company sells to hospitals, clinics or other care providers.' },
    evidence: { type: 'string', description: 'One sentence saying what shows it.' },
  },
  required: ['sells_to_healthcare', 'evidence'],
  additionalProperties: false,
};

/** One field of the answer: a JSON Schema (its usual keywords listed so catalogs show them; any other is kept). */
const AnswerField = Type.Object(
  {
    type: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.String())], {
        description: 'string, number, integer, boolean, array, object or null (or a list of them).',
      }),
    ),
    description: Type.Optional(Type.String({ description: 'What the field holds: the model reads it.' })),
    enum: Type.Optional(Type.Array(Type.Unknown(), { description: 'The only values allowed.' })),
  },
  { additionalProperties: true },
);

export const Input = Type.Object(
  {
    question: Type.String({
      minLength: 1,
      maxLength: 4000,
      description:
        'The question asked for each row; {{Column}} templates fill it, e.g. "Does {{Name}} ({{Website}}) sell to healthcare? Quote the page that shows it."',
    }),
    output_schema: Type.Object(
      {
        type: Type.Literal('object'),
        properties: Type.Object(
          {},
          { additionalProperties: AnswerField, description: 'The answer’s fields: name → JSON Schema of the field.' },
        ),
        required: Type.Optional(Type.Array(Type.String(), { description: 'The fields the answer must have.' })),
      },
      {
        additionalProperties: true,
        description:
          'The JSON Schema the answer must fit: an object with the fields you want back (any JSON Schema keyword: enum, items, minimum, pattern, format, $defs…). An answer that does not fit is sent back to the model once with what is wrong; a second miss is the cell’s error.',
        examples: [OUTPUT_SCHEMA_EXAMPLE],
      },
    ),
    max_steps: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_STEPS,
        default: DEFAULT_STEPS,
        description: `Budget of web searches and page reads per row (default ${DEFAULT_STEPS}); once spent, the model must answer with what it has. Each step costs a credit, and the answer one more.`,
      }),
    ),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'A chat model with tool calling, e.g. "gpt-4o-mini".' }),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof Input>;

/** The budget of a config: its max_steps, or the default. */
export const stepsOf = (config: { max_steps?: number }): number => config.max_steps ?? DEFAULT_STEPS;
