import { Type } from '@sinclair/typebox';
import { type AnyTool, summaryOf } from '../plugins/plugin-types.ts';
import { defineOperation } from './operation.ts';
import { EXAMPLE_PLUGINS } from './examples.ts';

const ToolItemSchema = Type.Object({
  tool_id: Type.String(),
  name: Type.String(),
  summary: Type.String({ description: 'What it does, in one plain sentence for people (the console shows it).' }),
  description: Type.String({ description: 'What it does, needs and costs, for agents and programs.' }),
  category: Type.String(),
  cost: Type.Object({ credits: Type.Number(), per: Type.String() }),
  config_schema: Type.Unknown(),
  produces: Type.Array(Type.Object({ field: Type.String(), description: Type.String() })),
});

/** A tool as the catalog lists it (the API docs' example). */
const EXAMPLE_TOOL = {
  tool_id: EXAMPLE_PLUGINS.tool,
  name: 'Domain normalizer',
  summary: "Turns a web address or an email address into the company's domain, e.g. example.com.",
  description:
    'Turns a URL, an email address or a host name into its registrable domain (www.shop.example.co.uk → example.co.uk), using the public suffix list. Free, no provider. Config: {"value": "{{Website}}"}.',
  category: 'transform',
  cost: { credits: 0, per: 'result' },
  config_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['value'],
    properties: { value: { type: 'string', description: 'A URL, email or host; usually "{{Website}}" or "{{Email}}".' } },
  },
  produces: [{ field: 'domain', description: 'Registrable domain, lower case.' }],
};

export function toolItem(t: AnyTool) {
  return {
    tool_id: t.id,
    name: t.name,
    summary: summaryOf(t),
    description: t.description,
    category: t.category,
    cost: t.cost,
    config_schema: t.input,
    produces: t.produces,
  };
}

export const listTools = defineOperation({
  name: 'list_tools',
  summary: 'List enrichment tools',
  description: 'Every enrichment tool that can fill a column: what it does, its config_schema, the fields it produces and its cost.',
  hint: 'read',
  method: 'GET',
  path: '/tools',
  response: Type.Array(ToolItemSchema),
  example: { response: [EXAMPLE_TOOL] },
  handler: async ({ kernel }) => kernel.plugins.listTools().map(toolItem),
});

/** Tools whose id, name, description, category or tags contain every word of the query, best first. */
export function searchTools(tools: AnyTool[], q: string): AnyTool[] {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return tools;
  const scored = tools.map((t) => {
    const fields = [t.id, t.name, t.category, t.tags.join(' '), t.produces.map((p) => p.field).join(' '), t.description].map((f) =>
      f.toLowerCase(),
    );
    let score = 0;
    for (const w of words) {
      const at = fields.findIndex((f) => f.includes(w));
      if (at < 0) return { t, score: -1 };
      score += fields.length - at; // a hit in the id or name counts more than one in the description
    }
    return { t, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((s) => s.t);
}

export const searchToolsOp = defineOperation({
  name: 'search_tools',
  summary: 'Search enrichment tools',
  description: 'Finds tools by words of what you need (e.g. "email", "phone", "tech stack"), best matches first.',
  hint: 'read',
  method: 'GET',
  path: '/tools/search',
  query: Type.Object({ q: Type.String({ minLength: 1, description: 'Words to look for.' }) }),
  response: Type.Array(ToolItemSchema),
  example: { query: { q: 'domain' }, response: [EXAMPLE_TOOL] },
  handler: async ({ kernel, query }) => searchTools(kernel.plugins.listTools(), query.q).map(toolItem),
});
