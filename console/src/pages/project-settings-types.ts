/** The project as its settings page reads it (GET /projects/{id}). */
export interface Settings {
  unique_columns: string[];
  on_conflict: 'skip' | 'update';
}
export interface Project {
  id: string;
  name: string;
  builder_id: string | null;
  columns: { col_id: string; name: string; type: 'input' | 'tool' }[];
  settings: Settings;
}
export interface Schedule {
  cron: string;
  timezone: string;
  next_run_at: string;
  last_run_at: string | null;
  last_outcome: string | null;
  created_at: string;
}
/** What a 409 of PUT …/settings holds: rows that already repeat the new key. */
export interface Duplicates {
  duplicates: number;
  examples: { row_ids: string[]; values: Record<string, string> }[];
}
