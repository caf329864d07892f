import { createHash } from 'node:crypto';
import { defineTool, requireEnv } from 'workflow-service/plugin-sdk';
import { research } from './agent.ts';
import { schemaProblem } from './answer-schema.ts';
import { type Config, Input, MAX_STEPS, OUTPUT_SCHEMA_EXAMPLE, stepsOf } from './config.ts';
import { sandboxResearch } from './sandbox.ts';
import { searchOf } from './search.ts';

/** The cache key: everything that changes the answer. */
const requestHash = (c: Config): string =>
  createHash('sha256')
    .update(JSON.stringify([c.question, c.output_schema, c.model, stepsOf(c)]))
    .digest('hex');

export default defineTool({
  kind: 'tool',
  id: 'research_agent',
  version: '1.0.0',
  // costUnits and a result's units came with SDK 1.3.
  sdk: '^1.3',
  name: 'Research agent',
  summary: 'Researches a question about each row on the web and answers in the fields you choose, with the pages it used.',
  description: `An AI agent that answers a question per row by searching the web and reading pages, then returns {answer, sources}: an answer fitting your JSON Schema and the pages it rests on, each with a quote. Config: {"question": "Does {{Name}} ({{Website}}) sell to healthcare? Quote the page.", "model": "gpt-4o-mini", "max_steps": 6, "output_schema": ${JSON.stringify(OUTPUT_SCHEMA_EXAMPLE)}}. max_steps (1–${MAX_STEPS}, default 6) bounds the searches and page reads; an answer that does not fit the schema is sent back once, then the cell fails. Costs 1 credit per search or page read plus 1 for the answer: max_steps + 1 is reserved per row and what is not used is given back. Live mode needs OPENAI_API_KEY (OPENAI_BASE_URL for a compatible server) and a search: SEARXNG_URL (SearXNG JSON API) or BRAVE_SEARCH_API_KEY (Brave Search API).`,
  category: 'ai',
  tags: ['ai', 'llm', 'agent', 'research', 'web', 'search', 'claygent', 'sources', 'openai'],
  legacyIds: [],
  input: Input,
  requires: ['question'],
  produces: [
    { field: 'answer', description: 'The answer, fitting output_schema.' },
    { field: 'sources', description: 'The pages the answer rests on: [{url, quote}].' },
  ],
  provider: {
    id: 'research_agent',
    requiredEnv: ['OPENAI_API_KEY'],
    optionalEnv: ['OPENAI_BASE_URL', 'RESEARCH_SEARCH_PROVIDER', 'SEARXNG_URL', 'BRAVE_SEARCH_API_KEY', 'BRAVE_SEARCH_BASE_URL'],
    // A token starts one row's research: up to max_steps + 2 model calls and max_steps searches or reads over
    // tens of seconds. One row every 2 s (bursts of 3) keeps a deployment near 1 search a second, Brave's free rate.
    rateLimit: { perSecond: 0.5, burst: 3 },
  },
  cost: { credits: 1, per: 'attempt' },
  // The most a row may use: every step of its budget, and the answer.
  costUnits: (config) => stepsOf(config) + 1,
  batchSize: 5,
  concurrency: 3,
  checkConfig: (config) => {
    const problem = schemaProblem(config.output_schema);
    return problem ? [{ path: 'output_schema', message: problem }] : [];
  },
  cacheKey: (item) => `research_agent:${requestHash(item.config)}`,
  cacheTtlMs: 7 * 24 * 60 * 60 * 1000,
  async enrichOne(item, ctx) {
    if (ctx.providerMode === 'sandbox') return sandboxResearch(item.config);
    const key = requireEnv(ctx, 'OPENAI_API_KEY');
    const url = `${(ctx.env('OPENAI_BASE_URL') || 'https://api.openai.com/v1').replace(/\/+$/, '')}/chat/completions`;
    return research(ctx, { model: { url, key, model: item.config.model }, search: searchOf(ctx) }, item.config);
  },
});
