import { type EnrichResult, sandboxDomain, seededRandom, slugify } from 'workflow-service/plugin-sdk';
import { type SampleSchema, sampleValue } from '../_ai/schema-sample.ts';
import { checkAnswer, urlKey } from './answer-schema.ts';
import { type Config, stepsOf } from './config.ts';

/**
 * The sandbox twin: no model, no search, no page. The same question gives the same made-up answer,
 * fitting the output schema, with one source under example.com; it uses (and costs) one search and
 * one read, as a short live research would.
 */
export function sandboxResearch(config: Config): EnrichResult {
  const question = String(config.question);
  // The company the question names, when it names a site: its example.com twin, as the other sandbox tools do.
  const site = /\b(?:[a-z0-9-]+\.)+[a-z]{2,}\b/i.exec(question)?.[0];
  const domain = site ? sandboxDomain(site) : `${slugify(question).slice(0, 40).replace(/-+$/, '') || 'research'}.example.com`;
  const source = { url: `https://${domain}/about`, quote: `Sandbox page about ${domain}: made-up text, not a real source.` };
  const research = {
    answer: sampleValue(config.output_schema as SampleSchema, 'answer', seededRandom(`research:${question}`)),
    sources: [source],
  };
  const units = Math.min(2, stepsOf(config)) + 1;
  const checked = checkAnswer(config.output_schema, JSON.stringify(research), new Set([urlKey(source.url) as string]));
  if (!checked.ok)
    return {
      status: 'error',
      error: `the sandbox cannot make up an answer fitting output_schema: ${checked.problems.join('; ')}`,
      retryable: false,
      units,
    };
  return { status: 'ok', value: checked.research, units };
}
