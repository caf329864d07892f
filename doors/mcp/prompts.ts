import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { PluginRegistry } from '../../core/plugins/registry.ts';
import { RpcError } from './operation-call.ts';

/**
 * Prompts for the typical flows (docs/mcp.md): each names the tools to call, in order, with the
 * waits that save polling. Arguments are completed by completion/complete (builder and tool ids).
 */
export const PROMPTS: Prompt[] = [
  {
    name: 'find_and_enrich_companies',
    title: 'Find companies and enrich them',
    description: 'Build a table of companies from a search (Google Maps by default), then fill an enrichment column.',
    arguments: [
      { name: 'query', description: 'What and where, e.g. "dentists in Lyon".', required: true },
      { name: 'max_results', description: 'How many companies (default 50).' },
      { name: 'builder_id', description: 'The builder to search with (default: a company search that takes a query).' },
      { name: 'tool_id', description: 'The enrichment tool for the new column (default: choose one with search_tools).' },
    ],
  },
  {
    name: 'enrich_pasted_list',
    title: 'Enrich a pasted list of companies',
    description: 'Turn a list of company names or domains (one per line) into a table, then fill an enrichment column.',
    arguments: [
      { name: 'companies', description: 'Company names or domains, one per line.', required: true },
      { name: 'tool_id', description: 'The enrichment tool for the new column (default: choose one with search_tools).' },
    ],
  },
];

const text = (t: string): GetPromptResult['messages'][number] => ({ role: 'user', content: { type: 'text', text: t } });

const toolStep = (toolId: string | undefined) =>
  toolId
    ? `create_column with tool_id "${toolId}" (its config from list_tools: config_schema; {{Column Name}} inserts a row value)`
    : 'search_tools for the enrichment wanted, then create_column with that tool (config from its config_schema; {{Column Name}} inserts a row value)';

/** A registered builder of this category whose form has this field (plugins decide which exist; core names none). */
function builderWith(plugins: PluginRegistry, category: string, field: string): string | undefined {
  return plugins
    .listBuilders()
    .find((b) => b.category === category && Object.hasOwn((b.input as { properties?: object }).properties ?? {}, field))?.id;
}

export function getPrompt(plugins: PluginRegistry, name: string, args: Record<string, string> = {}): GetPromptResult {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt "${name.slice(0, 64)}"; prompts/list names ${PROMPTS.length}`);
  const missing = (prompt.arguments ?? []).filter((a) => a.required && !args[a.name]?.trim()).map((a) => a.name);
  if (missing.length) throw new RpcError(ErrorCode.InvalidParams, `Prompt ${name} needs ${missing.join(', ')}`);
  if (name === 'find_and_enrich_companies') {
    const builder = args.builder_id || builderWith(plugins, 'companies', 'query');
    const max = Number(args.max_results) > 0 ? Math.floor(Number(args.max_results)) : 50;
    const form = JSON.stringify(JSON.stringify({ query: args.query, max_results: max }));
    const build = builder
      ? `run_builder with builder_id "${builder}" and form_data_json ${form} (list_builders shows the form of another builder)`
      : `list_builders, then run_builder with a company search for "${args.query}" (its form_data from list_builders)`;
    return {
      description: prompt.description,
      messages: [
        text(
          [
            `Find companies for "${args.query}" and enrich them with Workflow Service:`,
            `1. ${build}, with wait_seconds 50 — the answer's "wait" says whether the run ended; if not, call wait_for_project.`,
            `2. ${toolStep(args.tool_id)}.`,
            '3. run_pending_columns on the project with wait_seconds 50 (wait_for_project again if the cells have not all ended).',
            '4. get_project_rows with format "values" (and columns_json for only the columns needed) to read the results; summarise them.',
            'Runs spend credits: get_credits tells the balance.',
          ].join('\n'),
        ),
      ],
    };
  }
  const lines = (args.companies ?? '').split('\n').filter((l) => l.trim()).length;
  const importer = builderWith(plugins, 'import', 'companies');
  const build = importer
    ? `run_builder with builder_id "${importer}" and form_data_json ${JSON.stringify(JSON.stringify({ companies: args.companies }))}`
    : 'list_builders, then run_builder with the builder that imports a list of companies';
  return {
    description: prompt.description,
    messages: [
      text(
        [
          `Enrich this list of ${lines} companies with Workflow Service:`,
          `1. ${build}, with wait_seconds 30.`,
          `2. ${toolStep(args.tool_id)}.`,
          '3. run_pending_columns on the project with wait_seconds 50 (wait_for_project if the cells have not all ended).',
          '4. get_project_rows with format "values" to read the results, and summarise them.',
        ].join('\n'),
      ),
    ],
  };
}
