import { createHash } from 'node:crypto';
import {
  defineTool,
  type EnrichResult,
  type PluginContext,
  ProviderError,
  providerJson,
  requireEnv,
  rowFailure,
  type Static,
  Type,
} from 'workflow-service/plugin-sdk';
import { sandboxAnswer } from './sandbox-answer.ts';

const Input = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 20_000, description: 'The user message; {{Column}} templates fill it per row.' }),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'Model id, e.g. "gpt-4o-mini".' }),
    system: Type.Optional(Type.String({ maxLength: 20_000, description: 'System message.' })),
    json_schema: Type.Optional(
      Type.Object(
        { type: Type.Literal('object') },
        { additionalProperties: true, description: 'Structured output: the answer must be a JSON object fitting this JSON Schema.' },
      ),
    ),
    schema_name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Name of the schema (default "result").' })),
    strict: Type.Optional(
      Type.Boolean({
        description:
          'Strict schema adherence (default true; the schema then needs additionalProperties: false and every property required).',
      }),
    ),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768, description: 'Upper bound of the answer’s tokens.' })),
  },
  { additionalProperties: false },
);

type Config = Static<typeof Input>;

interface Completion {
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** The chat completion request body (OpenAI's, which compatible servers accept). */
function requestBody(c: Config): Record<string, unknown> {
  const messages = [...(c.system ? [{ role: 'system', content: c.system }] : []), { role: 'user', content: String(c.prompt) }];
  return {
    model: c.model,
    messages,
    ...(c.temperature !== undefined ? { temperature: c.temperature } : {}),
    // max_completion_tokens replaced max_tokens in the OpenAI API (reasoning models refuse the old name).
    ...(c.max_tokens !== undefined ? { max_completion_tokens: c.max_tokens } : {}),
    ...(c.json_schema
      ? {
          response_format: {
            type: 'json_schema',
            json_schema: { name: c.schema_name ?? 'result', schema: c.json_schema, strict: c.strict ?? true },
          },
        }
      : {}),
  };
}

/** One row: the model's text, or the parsed object under a schema. */
async function complete(ctx: PluginContext, url: string, key: string, c: Config): Promise<EnrichResult> {
  let data: Completion;
  try {
    data = (await providerJson(ctx, url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: requestBody(c),
      timeoutMs: 120_000,
    })) as Completion;
  } catch (e) {
    // An unknown model (404) is the same for every row: fail the batch rather than answer "not found".
    if (e instanceof ProviderError && e.status === 404) throw e;
    return rowFailure(e);
  }
  const choice = data.choices?.[0];
  ctx.log('ai_prompt completion', {
    model: c.model,
    prompt_tokens: data.usage?.prompt_tokens,
    completion_tokens: data.usage?.completion_tokens,
  });
  if (choice?.message?.refusal)
    return { status: 'error', error: `the model refused: ${choice.message.refusal.slice(0, 300)}`, retryable: false };
  const content = choice?.message?.content?.trim();
  if (!content) return { status: 'no_result', reason: 'the model answered nothing' };
  if (!c.json_schema) return { status: 'ok', value: content };
  try {
    return { status: 'ok', value: JSON.parse(content) };
  } catch {
    const cut = choice?.finish_reason === 'length' ? ' (cut at max_tokens)' : '';
    return { status: 'error', error: `the model's answer is not the JSON the schema asks for${cut}`, retryable: false };
  }
}

export default defineTool({
  kind: 'tool',
  id: 'ai_prompt',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'AI prompt',
  summary: 'Asks an AI model a question about each row and writes its answer.',
  description:
    'Asks an OpenAI-compatible chat model (OPENAI_BASE_URL, default https://api.openai.com/v1) a prompt written over the row, e.g. {"model": "gpt-4o-mini", "prompt": "In one sentence, what does {{Name}} ({{Website}}) sell?"}. With json_schema the answer is a JSON object fitting that schema (structured output), e.g. {"type": "object", "properties": {"b2b": {"type": "boolean"}}, "required": ["b2b"], "additionalProperties": false}. Live mode needs OPENAI_API_KEY. Costs 1 credit per row sent to the model.',
  category: 'ai',
  tags: ['ai', 'llm', 'gpt', 'openai', 'prompt', 'classify', 'summarize', 'research'],
  legacyIds: [],
  input: Input,
  requires: ['prompt'],
  produces: [{ field: 'answer', description: 'The model’s text, or an object fitting json_schema.' }],
  // A token is a batch of up to 5 concurrent requests (answers take seconds; one at a time would crawl): ≤ 5 requests/s.
  provider: { id: 'openai', requiredEnv: ['OPENAI_API_KEY'], optionalEnv: ['OPENAI_BASE_URL'], rateLimit: { perSecond: 1, burst: 2 } },
  cost: { credits: 1, per: 'attempt' },
  batchSize: 5,
  cacheKey: (item) =>
    `ai_prompt:${createHash('sha256')
      .update(JSON.stringify(requestBody(item.config)))
      .digest('hex')}`,
  cacheTtlMs: 7 * 24 * 60 * 60 * 1000,
  concurrency: 5,
  async enrichOne(item, ctx) {
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: sandboxAnswer(String(item.config.prompt), item.config.json_schema) };
    const key = requireEnv(ctx, 'OPENAI_API_KEY');
    const url = `${(ctx.env('OPENAI_BASE_URL') || 'https://api.openai.com/v1').replace(/\/+$/, '')}/chat/completions`;
    return complete(ctx, url, key, item.config);
  },
});
