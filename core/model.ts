/** The kernel's domain records, independent of how storage lays them out. */

export type Plan = 'free' | 'pro' | (string & {});

export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
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
  position: number;
}

export interface Project {
  /** Internal surrogate key (never shown). */
  pk: number;
  id: string;
  workspaceId: string;
  creatorId: string;
  name: string;
  builderId: string | null;
  formData: unknown;
  builderStatus: BuilderState;
  builderError: string | null;
  builderProgress: { rows_created: number; target: number } | null;
  createdAt: number;
  updatedAt: number;
}

export type CellStatus =
  | 'default'
  | 'pending'
  | 'queued'
  | 'running'
  | 'completed'
  | 'no_result'
  | 'error'
  | 'skipped'
  | 'insufficient_credits';

/** A stored cell: its value, and for tool cells the status and error text. */
export interface Cell {
  v: unknown;
  s?: CellStatus;
  e?: string;
}

export interface StoredRow {
  seq: number;
  /** Cells keyed by column number. */
  cells: Record<string, Cell>;
}
