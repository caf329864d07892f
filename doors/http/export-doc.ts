import { EXAMPLE_IDS } from '../../core/operations/examples.ts';
import type { Json } from './openapi-schemas.ts';
import { failure, PROJECT_ID_PARAMETER } from './route-doc.ts';

const jsonParam = (name: string, description: string): Json => ({
  name,
  in: 'query',
  required: false,
  description: `${description} URL-encoded JSON, as for GET rows.`,
  content: { 'application/json': { schema: {} } },
});

/** The OpenAPI entry of GET …/projects/{project_id}/export.csv (a streamed file, so not an operation of the table). */
export const exportOperation: Json = {
  operationId: 'download_project_csv',
  summary: 'Download rows as CSV',
  description:
    'The project’s rows as CSV (RFC 4180, UTF-8, CRLF line ends): a header of column names, then one line per row: input cells as they are, a tool’s result as its primary value (the first field the tool produces, e.g. the email of an email finder; `values=json` for the whole result), arrays joined with ", ". Any field holding a comma, a quote, a line break or leading/trailing blanks is quoted; an empty text is written "" and an empty cell as nothing, so both read back as they were (POST /projects/import.csv restores them, and takes off the \' of escaped formulas). Streamed in constant memory, whatever the number of rows. The same filter_groups, sort_rules and columns as GET rows. With an API key or a console session, or with `token` alone: a signed link from POST /projects/{project_id}/exports (MCP export_project), valid 15 minutes, which downloads the export it was made for.',
  tags: ['Rows'],
  parameters: [
    PROJECT_ID_PARAMETER,
    jsonParam('filter_groups', 'Only rows matching these filter groups.'),
    jsonParam('sort_rules', 'In this order (default: as added).'),
    jsonParam('columns', 'Only these columns (names or col_ids), in the project’s order.'),
    {
      name: 'bom',
      in: 'query',
      required: false,
      description: '1: start with a UTF-8 byte order mark (Excel wants one).',
      schema: { type: 'string', enum: ['0', '1'] },
    },
    {
      name: 'escape_formulas',
      in: 'query',
      required: false,
      description:
        "0: write text that starts with =, +, -, @, a tab or a carriage return as it is. By default such text (numbers excepted) starts with ' so that a spreadsheet opens it as text instead of evaluating it (CSV injection).",
      schema: { type: 'string', enum: ['0', '1'] },
    },
    {
      name: 'values',
      in: 'query',
      required: false,
      description: 'primary (default): a tool’s result as its primary value (the first field it produces); json: the whole result as JSON.',
      schema: { type: 'string', enum: ['primary', 'json'] },
    },
    {
      name: 'token',
      in: 'query',
      required: false,
      description: 'A signed download link’s token (no API key needed).',
      schema: { type: 'string' },
    },
  ],
  responses: {
    200: {
      description: 'The CSV file (Content-Disposition: attachment).',
      content: { 'text/csv': { schema: { type: 'string' }, example: 'Name,Website,Domain\r\nAcme,https://acme.com,acme.com\r\n' } },
    },
    401: failure(
      'No API key, session or token; or the link is forged or expired.',
      'This download link has expired (links last 15 minutes): ask for a new one (export_project)',
    ),
    403: failure('The workspace’s plan has no API access.', 'The workspace\'s plan "free" has no API access; upgrade it'),
    404: failure('The project_id names nothing in this workspace.', `Project ${EXAMPLE_IDS.project} not found (or not in this workspace)`),
    422: failure(
      'A filter, sort or column list is malformed or names an unknown column.',
      'filter_groups is not valid JSON (URL-encode it, as for GET rows)',
    ),
    429: failure('Over the plan’s requests per minute.', 'Too many requests: the pro plan allows 1200 per minute per key; retry in 3 s'),
  },
  security: [{ apiKey: [] }, {}],
};
