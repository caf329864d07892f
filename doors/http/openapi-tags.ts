/** The document's tags: one per resource, in the order a new user meets them. */
export const TAGS: { name: string; segments: string[]; description: string }[] = [
  {
    name: 'Builders',
    segments: ['project-builders'],
    description: 'The builders that start a project (a company search, a CSV import, a pasted list…), each with its form to fill.',
  },
  {
    name: 'Projects',
    segments: ['projects', 'wait', 'settings', 'schedule'],
    description: 'A project is a table of company rows made by a builder run; follow the run on the project itself.',
  },
  {
    name: 'Rows',
    segments: ['rows', 'exports', 'export.csv', 'inbound'],
    description:
      'Add, page, filter, sort, export and delete the rows of a project, or let other systems post rows to an inbound URL; tool cells fill in the background.',
  },
  {
    name: 'Columns',
    segments: ['columns'],
    description: 'Input columns and enrichment (tool) columns, waterfalls and run conditions; running them costs credits.',
  },
  { name: 'Filters', segments: ['filters'], description: 'A project’s saved filter groups, in the shape GET rows takes.' },
  {
    name: 'Tools',
    segments: ['tools'],
    description: 'The enrichment tools a column can use: what each produces, its config and its cost.',
  },
  { name: 'ICPs', segments: ['icps'], description: 'Ideal Customer Profiles and the scoring of a project’s rows against one.' },
  { name: 'Credits', segments: ['credits'], description: 'The workspace’s balance, plan and spending.' },
  {
    name: 'Webhooks',
    segments: ['webhooks'],
    description: 'Events sent to your URLs (Standard Webhooks signatures, retried for 24 h), and their delivery log.',
  },
];

/**
 * The tag of an operation's path (relative to BASE_PATH): its first segment, or under a project
 * the segment after the project id (`/projects/{project_id}/rows/search` → Rows;
 * `/projects/{project_id}/wait`, which waits on the project itself → Projects).
 */
export function tagOf(path: string): string {
  const [first = '', , sub] = path.split('/').filter(Boolean);
  const segment = first === 'projects' && sub ? sub : first;
  return TAGS.find((t) => t.segments.includes(segment))?.name ?? segment;
}
