import { type EnrichResult, type PluginContext, ProviderError, rowFailure } from 'workflow-service/plugin-sdk';
import { answerTool, READ_PAGE, runRead, runSearch, type Seen, WEB_SEARCH } from './agent-tools.ts';
import { checkAnswer } from './answer-schema.ts';
import { type ChatMessage, chat, type Model, type ToolCall, type ToolChoice } from './chat.ts';
import { type Config, stepsOf } from './config.ts';
import type { Search } from './search.ts';

/**
 * The research loop: the model searches and reads within a budget of steps, then calls `answer`.
 * When the budget is spent it is given only `answer`, forced. An answer that does not fit the output
 * schema goes back to it once with what is wrong; a second miss is the row's error. The row's
 * result says how many units it used — its steps and the answer — so the host charges just those.
 */

export interface AgentDeps {
  model: Model;
  search: Search;
}

interface State {
  messages: ChatMessage[];
  steps: number;
  seen: Seen;
  /** The one repair is spent: the next answer is the last. */
  repaired: boolean;
  /** The next turn may only answer (budget spent, or a repair asked for). */
  mustAnswer: boolean;
}

const FORCE_ANSWER: ToolChoice = { type: 'function', function: { name: 'answer' } };

function systemPrompt(budget: number): string {
  return [
    'You research one question on the web and answer it with facts you found.',
    `You have ${budget} steps: each web_search and each read_page is one. Search, read the pages that look most useful, then call answer.`,
    'Answer from what the pages say, not from memory. List in sources every page the answer rests on, with a short passage copied word for word from it.',
    'When the pages do not settle the question, answer with what the schema allows for "unknown" and say so.',
  ].join('\n');
}

/** A search or read, within the budget: the text handed back to the model. */
async function step(ctx: PluginContext, deps: AgentDeps, s: State, call: ToolCall, budget: number): Promise<string> {
  const name = call.function.name;
  if (name !== 'web_search' && name !== 'read_page')
    return `There is no function "${name.slice(0, 60)}": use web_search, read_page or answer.`;
  if (s.steps >= budget) return `Not run: the ${budget} steps are spent. Call answer now.`;
  s.steps++;
  return name === 'web_search' ? runSearch(deps.search, call.function.arguments, s.seen) : runRead(ctx, call.function.arguments, s.seen);
}

/** Runs a turn's calls (steps first, then the answer); answers the row's result once the research ends. */
async function handleCalls(ctx: PluginContext, deps: AgentDeps, s: State, calls: ToolCall[], config: Config): Promise<EnrichResult | null> {
  const budget = stepsOf(config);
  for (const call of calls.filter((c) => c.function.name !== 'answer')) {
    s.messages.push({ role: 'tool', tool_call_id: call.id, content: await step(ctx, deps, s, call, budget) });
  }
  const answer = calls.find((c) => c.function.name === 'answer');
  if (!answer) return null;
  const checked = checkAnswer(config.output_schema, answer.function.arguments, s.seen);
  if (checked.ok) return { status: 'ok', value: checked.research, units: s.steps + 1 };
  if (s.repaired) {
    const error = `the answer does not fit output_schema after one repair: ${checked.problems.join('; ')}`;
    return { status: 'error', error, retryable: false, units: s.steps + 1 };
  }
  s.repaired = true;
  s.mustAnswer = true;
  const problems = checked.problems.map((p) => `- ${p}`).join('\n');
  s.messages.push({
    role: 'tool',
    tool_call_id: answer.id,
    content: `The answer was refused:\n${problems}\nCall answer again with a corrected answer.`,
  });
  return null;
}

/** The turns of one row, until an answer is accepted or refused for good. */
async function converse(ctx: PluginContext, deps: AgentDeps, s: State, config: Config): Promise<EnrichResult> {
  const budget = stepsOf(config);
  const answer = answerTool(config.output_schema);
  // One turn per step, the answer and its repair, and two for a model that replies in plain text.
  for (let turn = 0; turn < budget + 4; turn++) {
    const only = s.mustAnswer || s.steps >= budget;
    const reply = await chat(
      ctx,
      deps.model,
      s.messages,
      only ? [answer] : [WEB_SEARCH, READ_PAGE, answer],
      only ? FORCE_ANSWER : 'required',
    );
    s.messages.push(reply.message);
    if (reply.refusal)
      return { status: 'error', error: `the model refused: ${reply.refusal.slice(0, 300)}`, retryable: false, units: s.steps + 1 };
    if (!reply.calls.length) {
      s.messages.push({ role: 'user', content: 'Reply by calling a function: web_search, read_page or answer.' });
      continue;
    }
    const result = await handleCalls(ctx, deps, s, reply.calls, config);
    if (result) return result;
    if (s.steps >= budget && !s.mustAnswer) {
      s.mustAnswer = true;
      s.messages.push({ role: 'user', content: `The ${budget} steps are spent. Call answer now with what you found.` });
    }
  }
  return { status: 'error', error: `the model gave no answer in ${budget + 4} turns`, retryable: false, units: s.steps + 1 };
}

/** Researches one row's question. Failures that concern every row (key, rate limit, outage, unknown model) are thrown. */
export async function research(ctx: PluginContext, deps: AgentDeps, config: Config): Promise<EnrichResult> {
  const s: State = {
    messages: [
      { role: 'system', content: systemPrompt(stepsOf(config)) },
      { role: 'user', content: String(config.question) },
    ],
    steps: 0,
    seen: new Set(),
    repaired: false,
    mustAnswer: false,
  };
  try {
    return await converse(ctx, deps, s, config);
  } catch (e) {
    // An unknown model (404) is the same for every row: fail the batch rather than one row.
    if (e instanceof ProviderError && e.status === 404) throw e;
    return { ...rowFailure(e), units: s.steps + 1 };
  }
}
