import type { Static } from '@sinclair/typebox';
import type { ColumnView, ProjectDetailsSchema, RowSchema } from './schemas.ts';

/**
 * The one story the API docs tell, so that the examples of the operations fit together: the Google
 * Maps builder found dentists in Lyon, a Domain column is filled by domain_normalizer, and an ICP
 * scores the rows. Documentation only (each operation's `example`); test/openapi-examples.test.ts
 * holds every example to its operation's schemas.
 */
/** The bundled plugins the story uses: named here only, so the kernel's code names none (test/plugin-boundary.test.ts). */
export const EXAMPLE_PLUGINS = { builder: 'google_maps_search', tool: 'domain_normalizer' } as const;

export const EXAMPLE_IDS = {
  workspace: '01a20a82-5aec-76a6-9cde-72a8b7c0690d',
  project: '01a20a86-feed-7058-bfb2-73a1d6641b2b',
  nameColumn: '01a20a86-fef0-7569-9d56-3403e2d61d24',
  ratingColumn: '01a20a86-fef0-7569-9d56-45f5320fbb5c',
  domainColumn: '01a20a86-ff21-702a-87ed-1ab87d261aaf',
  fitColumn: '01a20a82-5d8b-7679-b329-d39ecbef8429',
  icp: '01a20a82-5d80-749c-8460-e606ab32e6a4',
  run: '01a20a82-5d90-7294-b560-472ea968527b',
  webhook: '01a20b13-77c4-7d0e-a1f2-5c8e2f4b9a10',
  delivery: 'msg_01a20b1477c47d0ea1f25c8e2f4b9a11',
};

const CREATED = '2026-11-23T22:29:08.975Z';
const UPDATED = '2026-11-23T22:29:09.025Z';

export const EXAMPLE_PROJECT_NAME = 'Lyon dentists';

/** The input columns the builder made, with their col_id. */
const INPUT_COLUMNS: [string, string][] = [
  ['Name', EXAMPLE_IDS.nameColumn],
  ['Address', '01a20a86-fef0-7569-9d56-38f1dd2584bf'],
  ['Phone', '01a20a86-fef0-7569-9d56-3c8d4d737ff5'],
  ['Website', '01a20a86-fef0-7569-9d56-41d034dda5b0'],
  ['Rating', EXAMPLE_IDS.ratingColumn],
  ['Reviews', '01a20a86-fef0-7569-9d56-49f4bf579aa7'],
  ['Category', '01a20a86-fef0-7569-9d56-4ce3366d68dd'],
  ['Google Maps URL', '01a20a86-fef0-7569-9d56-52f1ad2292f2'],
];

/** The Domain column as create_column answers it. */
export const EXAMPLE_TOOL_COLUMN: ColumnView = {
  col_id: EXAMPLE_IDS.domainColumn,
  name: 'Domain',
  required: false,
  type: 'tool',
  tool_id: EXAMPLE_PLUGINS.tool,
  config: { value: '{{Website}}' },
  auto_run: true,
  run_condition: 'Website != null',
  primary_field: 'domain',
};

export const EXAMPLE_COLUMNS: ColumnView[] = [
  ...INPUT_COLUMNS.map(([name, col_id]): ColumnView => ({ col_id, name, required: true, type: 'input' })),
  EXAMPLE_TOOL_COLUMN,
];

/** One place as the builder wrote it: input column name → value. */
export const EXAMPLE_COMPANY: Record<string, unknown> = {
  Name: 'Cabinet Dentaire Bellecour',
  Address: '1 Place Bellecour, 69002 Lyon',
  Phone: '+33 4 78 00 00 00',
  Website: 'https://www.bellecour-dentaire.example.com',
  Rating: 4.9,
  Reviews: 128,
  Category: 'Dentist',
  'Google Maps URL': 'https://maps.example.com/place/cabinet-dentaire-bellecour',
};

const inputCell = (name: string, value: unknown) => ({ name, value, status: 'default', is_loading: false });

export const EXAMPLE_ROW: Static<typeof RowSchema> = {
  id: '1',
  project_id: EXAMPLE_IDS.project,
  company: {
    ...Object.fromEntries(Object.entries(EXAMPLE_COMPANY).map(([name, value]) => [name, inputCell(name, value)])),
    Domain: { name: 'Domain', value: 'example.com', status: 'completed', is_loading: false },
  },
};

export const EXAMPLE_PROJECT: Static<typeof ProjectDetailsSchema> = {
  id: EXAMPLE_IDS.project,
  name: EXAMPLE_PROJECT_NAME,
  builder_id: EXAMPLE_PLUGINS.builder,
  columns: EXAMPLE_COLUMNS,
  first_company_data: { ...EXAMPLE_COMPANY, Domain: 'example.com' },
  row_count: 20,
  builder_status: { type: 'completed', error_message: null },
  lead_gen_execution_log: [
    { at: '2026-11-23T22:29:08.980Z', step: 'started', message: 'Google Maps search: aiming at 20 rows', attempt: 1 },
    { at: '2026-11-23T22:29:08.983Z', step: 'page', message: 'page 1: 20 rows written', page: 1, rows: 20, total_rows: 20 },
    { at: '2026-11-23T22:29:08.991Z', step: 'completed', message: '20 rows in 1 pages', total_rows: 20 },
  ],
  settings: { unique_columns: ['Website'], on_conflict: 'skip' },
  createdAt: CREATED,
  updatedAt: UPDATED,
};

export const EXAMPLE_TIMES = { createdAt: CREATED, updatedAt: UPDATED };

/** Rows whose Name contains "dentaire", best rated first. */
export const EXAMPLE_FILTER_GROUPS = [
  { type: 'and' as const, rules: [{ col_id: EXAMPLE_IDS.nameColumn, operator: 'contains' as const, value: 'dentaire' }] },
];
export const EXAMPLE_SORT_RULES = [{ col_id: EXAMPLE_IDS.ratingColumn, direction: 'desc' as const, sort_as_number: true }];

export const EXAMPLE_ICP_DEFINITION = { industries: ['dentist'], locations: ['Lyon'] };

export const EXAMPLE_ICP = {
  id: EXAMPLE_IDS.icp,
  name: 'Lyon dental practices',
  definition: EXAMPLE_ICP_DEFINITION,
  createdAt: CREATED,
  updatedAt: CREATED,
};

/** The best-fitting rows of a score run against EXAMPLE_ICP. */
export const EXAMPLE_TOP_MATCHES = [
  {
    row_id: '1',
    score: 100,
    reasons: [
      { criterion: 'industries', weight: 25, met: true, reason: 'Category "Dentist" matches "dentist"' },
      { criterion: 'locations', weight: 15, met: true, reason: 'Address "1 Place Bellecour, 69002 Lyon" matches "Lyon"' },
    ],
  },
];

/** The score column score_icp made (col_name "Fit"). */
export const EXAMPLE_SCORE_COLUMN: ColumnView = {
  col_id: EXAMPLE_IDS.fitColumn,
  name: 'Fit',
  required: false,
  type: 'tool',
  tool_id: 'icp_score',
  config: { icp_id: EXAMPLE_IDS.icp, definition: EXAMPLE_ICP_DEFINITION },
  auto_run: false,
  run_condition: null,
  primary_field: 'icp_score',
};
