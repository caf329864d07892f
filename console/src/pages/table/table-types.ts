/** The shapes the table pages read from the REST API (rows, columns, projects). */

export interface Column {
  col_id: string;
  name: string;
  type: 'input' | 'tool';
  tool_id?: string | null;
  config?: unknown;
  auto_run?: boolean;
  run_condition?: string | null;
  waterfall?: { tool_id: string; config: Record<string, unknown> }[];
  /** The field of a tool's record that is the column's value at a glance (`email` of {email, confidence}). */
  primary_field?: string | null;
}
export interface Project {
  id: string;
  name: string;
  columns: Column[];
  row_count: number;
  builder_status: { type: string; error_message: string | null; progress?: { rows_created: number; target: number }; warning?: string };
  lead_gen_execution_log?: { at: string; step: string; message: string }[];
  settings?: { unique_columns: string[] };
}
export interface ApiCell {
  value: unknown;
  status?: string;
  error?: string | null;
}
export interface Row {
  id: string;
  company: Record<string, ApiCell>;
}
