/** The document's tags: one per resource, in the order a new user meets them. */
export const TAGS: { name: string; segment: string; description: string }[] = [
  {
    name: 'Builders',
    segment: 'project-builders',
    description: 'The builders that start a project (a company search, a CSV import, a pasted list…), each with its form to fill.',
  },
  {
    name: 'Projects',
    segment: 'projects',
    description: 'A project is a table of company rows made by a builder run; follow the run on the project itself.',
  },
  {
    name: 'Rows',
    segment: 'rows',
    description: 'Add, page, filter, sort and delete the rows of a project; tool cells fill in the background.',
  },
  {
    name: 'Columns',
    segment: 'columns',
    description: 'Input columns and enrichment (tool) columns, waterfalls and run conditions; running them costs credits.',
  },
  { name: 'Filters', segment: 'filters', description: 'A project’s saved filter groups, in the shape GET rows takes.' },
  { name: 'Tools', segment: 'tools', description: 'The enrichment tools a column can use: what each produces, its config and its cost.' },
  { name: 'ICPs', segment: 'icps', description: 'Ideal Customer Profiles and the scoring of a project’s rows against one.' },
  { name: 'Credits', segment: 'credits', description: 'The workspace’s balance, plan and spending.' },
];

/**
 * The tag of an operation's path (relative to BASE_PATH): its first segment, or under a project
 * the segment after the project id (`/projects/{project_id}/rows/search` → Rows).
 */
export function tagOf(path: string): string {
  const [first = '', , sub] = path.split('/').filter(Boolean);
  // `/projects/{project_id}/wait` waits on the project itself.
  const segment = first === 'projects' && sub && sub !== 'wait' ? sub : first;
  return TAGS.find((t) => t.segment === segment)?.name ?? segment;
}
