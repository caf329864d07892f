/** The kernel's domain records, independent of how storage lays them out. */

export type Plan = 'free' | 'pro' | (string & {});

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  createdAt: number;
}

/** A person's role in a workspace: owners and admins manage keys, members and billing. */
export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export interface User {
  id: string;
  /** Lower-cased. */
  email: string;
  createdAt: number;
}

export type BuilderState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface Column {
  /** Dense number inside the project; the key of the column in storage. */
  no: number;
  id: string;
  name: string;
  type: 'input' | 'tool';
  toolId: string | null;
  config: unknown;
  autoRun: boolean;
  runCondition: string | null;
  /** Ordered steps that produce the same field; the first valid result wins. */
  waterfall: WaterfallStep[] | null;
  /** A waterfall stops before a step that would take a row's spend past this. */
  maxCreditsPerRow: number | null;
  /** `auto`: a waterfall tries its steps in the order of best cost per result found so far (docs/enrichment.md). */
  stepOrder: 'listed' | 'auto';
  position: number;
}

export interface WaterfallStep {
  tool_id: string;
  config: Record<string, unknown>;
}

export interface Project {
  /** Internal surrogate key (never shown). */
  pk: number;
  id: string;
  workspaceId: string;
  creatorId: string;
  name: string;
  builderId: string | null;
  builderStatus: BuilderState;
  builderError: string | null;
  builderProgress: { rows_created: number; target: number } | null;
  /** Where the builder run stands: rows written so far and the plugin's cursor (resume after a crash). */
  builderCheckpoint: BuilderCheckpoint | null;
  /** Steps of the builder run, for `lead_gen_execution_log`. */
  executionLog: ExecutionLogEntry[];
  /** The project's saved filter_groups (same schema as the rows endpoint). */
  savedFilters: unknown[];
  /** Advances whenever the project's columns change (it is the next column number): keys the columns cache. */
  columnsVersion: number;
  settings: ProjectSettings;
  createdAt: number;
  updatedAt: number;
}

/** What a project's owner set about how rows come in (PUT /projects/{id}/settings). */
export interface ProjectSettings {
  /** Input column names whose values together identify a row; none: rows are never compared. */
  uniqueColumns: string[];
  /** A row whose key exists: `skip` it (the existing row_id is answered) or `update` the existing row's empty input cells. */
  onConflict: 'skip' | 'update';
}

export const DEFAULT_SETTINGS: ProjectSettings = { uniqueColumns: [], onConflict: 'skip' };

/** The statuses a tool cell may have. */
export const TOOL_CELL_STATUSES = [
  'pending',
  'queued',
  'running',
  'completed',
  'no_result',
  'error',
  'skipped',
  'insufficient_credits',
] as const;
/** Every cell status: `default` is an input cell's. */
export const CELL_STATUSES = ['default', ...TOOL_CELL_STATUSES] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

/** Where a tool cell's value came from (docs/enrichment.md, provenance): shown with include=meta. */
export interface CellMeta {
  /** The tool that last ran on the cell (for a completed cell, the waterfall step that found the value). */
  tool_id: string;
  /** The provider it called (the tool's own id when it names none). */
  provider: string;
  /** When the value was found (ISO 8601); for a cached value, when it was first found. */
  fetched_at: string;
  /** Credits the cell cost, net of refunds, over every step tried. */
  credits: number;
  /** Reused from the workspace's result cache: free. */
  cached: boolean;
}

/** A stored cell: its value, and for tool cells the status, error text and provenance. */
export interface Cell {
  v: unknown;
  s?: CellStatus;
  e?: string;
  m?: CellMeta;
}

export interface StoredRow {
  seq: number;
  /** Cells keyed by column number. */
  cells: Record<string, Cell>;
}

export interface BuilderCheckpoint {
  rows_created: number;
  pages: number;
  /** The plugin's own resume point, when it yields one. */
  cursor?: unknown;
  /** A scheduled run: its own credit reservation (`run`), and the rows earlier runs paid for. */
  run?: string;
  rows_before?: number;
}

/** One step of a builder run, as a user reads it to learn why a run produced what it did. */
export interface ExecutionLogEntry {
  at: string;
  /** `warning`: the run stopped at a row limit while its source had more (shown as builder_status.warning). */
  step: 'queued' | 'scheduled' | 'skipped' | 'started' | 'resumed' | 'page' | 'retry' | 'warning' | 'completed' | 'failed' | 'cancelled';
  message: string;
  attempt?: number;
  page?: number;
  rows?: number;
  total_rows?: number;
  error?: string;
}
