import { type PluginContext, providerJson } from 'workflow-service/plugin-sdk';

/**
 * The OpenAI chat-completions API with tool calling (POST {base}/chat/completions), which
 * compatible servers (vLLM, Ollama, LiteLLM, Azure's v1 API…) speak too.
 */

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A function the model may call: its name, what it is for and its JSON Schema parameters. */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export type ToolChoice = 'required' | { type: 'function'; function: { name: string } };

export interface Model {
  /** The chat/completions URL. */
  url: string;
  key: string;
  model: string;
}

interface Completion {
  choices?: { message?: { content?: string | null; refusal?: string | null; tool_calls?: ToolCall[] }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** One model turn: the assistant message to keep in the conversation, its tool calls, and a refusal if any. */
export interface Turn {
  message: ChatMessage & { role: 'assistant' };
  calls: ToolCall[];
  refusal: string | null;
}

/** Sends the conversation; a non-2xx answer throws the SDK's ProviderError (retryable for 429 and 5xx). */
export async function chat(
  ctx: PluginContext,
  model: Model,
  messages: ChatMessage[],
  tools: FunctionTool[],
  choice: ToolChoice,
): Promise<Turn> {
  const data = (await providerJson(ctx, model.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${model.key}` },
    // One call per turn keeps the budget exact: each search or read is seen before the next is chosen.
    body: { model: model.model, messages, tools, tool_choice: choice, parallel_tool_calls: false },
    timeoutMs: 120_000,
  })) as Completion;
  const reply = data.choices?.[0]?.message;
  ctx.log('research_agent turn', {
    model: model.model,
    prompt_tokens: data.usage?.prompt_tokens,
    completion_tokens: data.usage?.completion_tokens,
  });
  const calls = (reply?.tool_calls ?? []).filter((c) => c?.type === 'function' && typeof c.function?.name === 'string');
  return {
    message: { role: 'assistant', content: reply?.content ?? null, ...(calls.length ? { tool_calls: calls } : {}) },
    calls,
    refusal: reply?.refusal ?? null,
  };
}
