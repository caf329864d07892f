import { defineBuilder, Type } from 'workflow-service/plugin-sdk';

const MAX_ROWS = 10_000;
const DOMAIN_LIKE = /^(https?:\/\/)?(www\.)?(([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})(?::\d+)?(\/\S*)?$/i;

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** A line that looks like a domain or URL fills `Domain` (bare host, no www.), anything else `Name`. */
export function parseLine(line: string): { Name: string | null; Domain: string | null } {
  const m = DOMAIN_LIKE.exec(line);
  if (m?.[3]) return { Name: null, Domain: m[3].toLowerCase() };
  return { Name: line, Domain: null };
}

export default defineBuilder({
  kind: 'builder',
  id: 'manual_list_builder',
  version: '1.0.0',
  name: 'Manual list',
  summary: 'Starts from a list you type or paste: one row per item.',
  description:
    'Creates one row per line of pasted text. A line that looks like a domain or URL fills the Domain column, any other line the Name column. Needs no provider and no credentials.',
  category: 'import',
  tags: ['import', 'companies'],
  legacyIds: ['manual_list'],
  input: Type.Object(
    {
      companies: Type.String({
        minLength: 1,
        description:
          'Company names or domains, one per line (at most 10,000 lines: a longer list stops there with builder_status.warning).',
      }),
    },
    { additionalProperties: false },
  ),
  cost: { credits: 0, per: 'row' },
  maxRows: MAX_ROWS,
  columns: () => ['Name', 'Domain'],
  projectName: (form) => `Manual list (${Math.min(lines(form.companies).length, MAX_ROWS)} companies)`,
  target: (form) => Math.min(lines(form.companies).length, MAX_ROWS),
  // Yields every line: the host writes up to maxRows and warns when there were more.
  async *run(form) {
    const all = lines(form.companies);
    for (let i = 0; i < all.length; i += 500) yield all.slice(i, i + 500).map(parseLine);
  },
});
