import { seededRandom } from 'workflow-service/plugin-sdk';
import { type SampleSchema, sampleValue } from '../_ai/schema-sample.ts';

/** The sandbox twin's answer: a fake object for a schema, else a text that quotes the prompt. */
export function sandboxAnswer(prompt: string, schema: Record<string, unknown> | undefined): unknown {
  if (schema) return sampleValue(schema as SampleSchema, 'value', seededRandom(`ai:${prompt}`));
  return `[sandbox answer] ${prompt.replace(/\s+/g, ' ').trim().slice(0, 120)}`;
}
